"""The seccomp filter and per-test namespaces: a minimal kernel surface, and no state crosses tests.

Every sandboxed process runs under hts-runner's libseccomp filter: namespace creation and
entry, mounts, keyrings, bpf, perf, userfaultfd, io_uring, ptrace, process_vm_*, modules
and kexec fail with EPERM (clone3 with ENOSYS, so that glibc falls back to clone, whose
flags the filter sees).  Each test gets fresh PID, mount, IPC, network and UTS namespaces
and a fresh /tmp and /dev/shm, and a borderline test is re-run in a new sandbox.
"""

from __future__ import annotations

import platform
from pathlib import Path

import pytest

from sandbox import Limits, Sandbox, Verdict

from .conftest import parent_pid, run_one

# (name, how to call it) in C++; every call would succeed, or fail otherwise than EPERM, unfiltered
CPP_CALLS = {
    "unshare": "syscall(SYS_unshare, CLONE_NEWUSER)",
    "unshare_net": "syscall(SYS_unshare, CLONE_NEWNET)",
    "setns": "syscall(SYS_setns, open(\"/proc/self/ns/uts\", O_RDONLY), 0)",
    "clone_newuser": "clone_ns(CLONE_NEWUSER)",
    "clone_newnet": "clone_ns(CLONE_NEWNET)",
    "mount": "syscall(SYS_mount, \"none\", \"/tmp\", \"tmpfs\", 0, 0)",
    "umount2": "syscall(SYS_umount2, \"/tmp\", MNT_DETACH)",
    "pivot_root": "syscall(SYS_pivot_root, \".\", \".\")",
    "add_key": "syscall(SYS_add_key, \"user\", \"hts\", \"v\", 1, KEY_SPEC_PROCESS_KEYRING)",
    "keyctl": "syscall(SYS_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 1)",
    "request_key": "syscall(SYS_request_key, \"user\", \"hts\", 0, 0)",
    "bpf": "syscall(SYS_bpf, 0, 0, 0)",
    "perf_event_open": "syscall(SYS_perf_event_open, 0, 0, -1, -1, 0)",
    "userfaultfd": "syscall(SYS_userfaultfd, 0)",
    "io_uring_setup": "syscall(SYS_io_uring_setup, 1, 0)",
    "io_uring_enter": "syscall(SYS_io_uring_enter, -1, 0, 0, 0, 0, 0)",
    "io_uring_register": "syscall(SYS_io_uring_register, -1, 0, 0, 0)",
    "ptrace": "syscall(SYS_ptrace, PTRACE_TRACEME, 0, 0, 0)",
    "process_vm_readv": "syscall(SYS_process_vm_readv, getpid(), 0, 0, 0, 0, 0)",
    "process_vm_writev": "syscall(SYS_process_vm_writev, getpid(), 0, 0, 0, 0, 0)",
    "init_module": "syscall(SYS_init_module, 0, 0, \"\")",
    "finit_module": "syscall(SYS_finit_module, -1, \"\", 0)",
    "delete_module": "syscall(SYS_delete_module, \"hts\", 0)",
    "kexec_load": "syscall(SYS_kexec_load, 0, 0, 0, 0)",
    "kexec_file_load": "syscall(SYS_kexec_file_load, -1, -1, 0, \"\", 0)",
    "socket_inet": "socket(AF_INET, SOCK_STREAM, 0)",
    "socket_inet6": "socket(AF_INET6, SOCK_DGRAM, 0)",
    "socket_netlink": "socket(AF_NETLINK, SOCK_RAW, 0)",
}
SYSCALLS_CPP = (
    "#include <bits/stdc++.h>\n#include <fcntl.h>\n#include <sched.h>\n#include <signal.h>\n#include <unistd.h>\n"
    "#include <sys/mount.h>\n#include <sys/ptrace.h>\n#include <sys/syscall.h>\n#include <sys/wait.h>\n"
    "#include <linux/keyctl.h>\n#include <linux/sched.h>\n#include <sys/socket.h>\n"
    "static long clone_ns(long flag){long r=syscall(SYS_clone, flag|SIGCHLD, 0, 0, 0, 0);\n"
    " if(r==0) _exit(0); if(r>0) waitpid(r, 0, 0); return r;}\n"
    "static void report(const char*name, long r){printf(\"%s %ld %d\\n\", name, r, r<0?errno:0); errno=0;}\n"
    "int main(){\n"
    + "".join(f"  errno=0; report(\"{name}\", {call});\n" for name, call in CPP_CALLS.items())
    + "  clone_args args{}; args.flags=CLONE_NEWUSER; args.exit_signal=SIGCHLD; errno=0;\n"
    "  long r=syscall(SYS_clone3, &args, sizeof args); if(r==0) _exit(0); report(\"clone3\", r);\n"
    "  std::vector<std::thread> ts; std::atomic<int> n{0};\n"
    "  for(int i=0;i<4;i++) ts.emplace_back([&]{n++;}); for(auto&t:ts) t.join();\n"
    "  pid_t p=fork(); if(p==0) _exit(0); waitpid(p,0,0);\n"
    "  printf(\"threads %d fork %d unix %d\\n\", n.load(), p>0, socket(AF_UNIX, SOCK_STREAM, 0) >= 0);\n"
    "  std::ifstream s(\"/proc/self/status\"); std::string l; while(std::getline(s,l)) if(l.rfind(\"Seccomp:\",0)==0) puts(l.c_str());\n"
    "}\n"
)
# x86_64 numbers (Python 3.11 has no os.unshare and no SYS_* table)
PY_CALLS = {"unshare": (272, 0x10000000), "setns": (308, -1, 0), "mount": (165, b"none", b"/tmp", b"tmpfs", 0, 0),
            "add_key": (248, b"user", b"hts", b"v", 1, -2), "keyctl": (250, 0, -3, 1),
            "request_key": (249, b"user", b"hts", 0, 0), "bpf": (321, 0, 0, 0), "userfaultfd": (323, 0),
            "io_uring_setup": (425, 1, 0), "ptrace": (101, 0, 0, 0, 0), "perf_event_open": (298, 0, 0, -1, -1, 0),
            "init_module": (175, 0, 0, b""), "kexec_load": (246, 0, 0, 0, 0)}
SYSCALLS_PY = (
    "import ctypes, os, subprocess, threading\nlibc = ctypes.CDLL(None, use_errno=True)\n"
    f"for name, (nr, *args) in {PY_CALLS!r}.items():\n"
    "    r = libc.syscall(nr, *args)\n    print(name, r, ctypes.get_errno() if r < 0 else 0)\n"
    "    ctypes.set_errno(0)\n"
    "u = subprocess.run(['/usr/bin/unshare', '-U', '/bin/true'], capture_output=True, text=True)\n"
    "print('unshare_tool', u.returncode, 'Operation not permitted' in u.stderr)\n"
    "ts = [threading.Thread(target=lambda: None) for _ in range(4)]\n[t.start() for t in ts]\n[t.join() for t in ts]\n"
    "print('threads', len(ts))\n"
    "print([l for l in open('/proc/self/status') if l.startswith('Seccomp:')][0].strip())\n"
)
SYSCALLS_JAVA = (
    "import java.nio.file.*;\npublic class Main { public static void main(String[] a) throws Exception {\n"
    "Process p = new ProcessBuilder(\"/usr/bin/unshare\", \"-U\", \"/bin/true\").redirectErrorStream(true).start();\n"
    "String out = new String(p.getInputStream().readAllBytes()); int code = p.waitFor();\n"
    "System.out.println(\"unshare_tool \" + code + \" \" + out.contains(\"Operation not permitted\"));\n"
    "for (String l : Files.readAllLines(Paths.get(\"/proc/self/status\"))) if (l.startsWith(\"Seccomp:\"))\n"
    "System.out.println(l); } }\n"
)


def _errnos(stdout: bytes) -> dict[str, int]:
    rows = [line.split() for line in stdout.decode().splitlines()]
    return {row[0]: int(row[2]) for row in rows if len(row) == 3 and row[2].lstrip("-").isdigit()}


def test_each_denied_syscall_returns_eperm_in_cpp(sb: Sandbox) -> None:
    result = run_one(sb, "cpp", SYSCALLS_CPP)
    assert result.verdict == Verdict.OK, result
    errnos = _errnos(result.stdout)
    assert {name: errnos.get(name) for name in CPP_CALLS} == dict.fromkeys(CPP_CALLS, 1)  # EPERM
    assert errnos["clone3"] == 38  # ENOSYS: glibc falls back to clone
    out = result.stdout.decode()
    assert "threads 4 fork 1 unix 1" in out  # ordinary threads, fork and unix sockets still work
    assert "Seccomp:\t2" in out


@pytest.mark.skipif(platform.machine() != "x86_64", reason="the Python program uses x86_64 syscall numbers")
def test_each_denied_syscall_returns_eperm_in_python(sb: Sandbox) -> None:
    result = run_one(sb, "python3", SYSCALLS_PY)
    assert result.verdict == Verdict.OK, result
    errnos = _errnos(result.stdout)
    assert {name: errnos.get(name) for name in PY_CALLS} == dict.fromkeys(PY_CALLS, 1)
    out = result.stdout.decode()
    assert "unshare_tool 1 True" in out and "threads 4" in out and "Seccomp:\t2" in out


# the program's capability sets and no_new_privs, as the kernel shows them
CAPS = {
    "cpp": "#include <bits/stdc++.h>\nint main(){std::ifstream f(\"/proc/self/status\"); std::string l;"
           "while(std::getline(f,l)) if(l.rfind(\"Cap\",0)==0 || l.rfind(\"NoNewPrivs\",0)==0) std::cout<<l<<\"\\n\";}\n",
    "python3": "for line in open('/proc/self/status'):\n"
               "    if line.startswith(('Cap', 'NoNewPrivs')):\n        print(line, end='')\n",
}


@pytest.mark.parametrize("language", ["cpp", "python3"])
def test_a_program_holds_no_capability_and_can_gain_none(sb: Sandbox, language: str) -> None:
    """It runs as uid 0 of the sandbox's user namespace: every set is empty, the bounding set
    included (each capability the kernel knows is dropped from it), and no_new_privs is on."""
    result = run_one(sb, language, CAPS[language])
    assert result.verdict == Verdict.OK, result
    fields = dict(line.split(":\t") for line in result.stdout.decode().splitlines())
    assert fields == {"CapInh": "0" * 16, "CapPrm": "0" * 16, "CapEff": "0" * 16, "CapBnd": "0" * 16,
                      "CapAmb": "0" * 16, "NoNewPrivs": "1"}, fields


# What a C++ program can do to its test's init (pid 1 of its PID namespace), whose memory is
# the launcher's own (the runner clones each init into it): read or write that memory, read its
# maps, trace it, signal it. Run twice in one batch: the second test needs the same launcher.
REACH_INIT = r"""
#include <bits/stdc++.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <unistd.h>
#include <dirent.h>
int main() {
  std::vector<std::string> out;
  for (int mode : {O_RDONLY, O_RDWR}) {
    int fd = open("/proc/1/mem", mode);
    out.push_back(fd >= 0 ? "mem-open" : std::to_string(errno));
  }
  std::ifstream maps("/proc/1/maps"); std::string line;
  out.push_back(std::getline(maps, line) ? "maps-read" : "maps-refused");
  long word = 0; char buf[8];
  struct iovec local = {buf, sizeof buf}, remote = {&word, sizeof word};
  out.push_back(process_vm_readv(1, &local, 1, &remote, 1, 0) >= 0 ? "vm-read" : std::to_string(errno));
  out.push_back(ptrace(PTRACE_ATTACH, 1, 0, 0) == 0 ? "traced" : std::to_string(errno));
  for (int sig : {SIGKILL, SIGTERM, SIGSEGV, SIGSTOP}) kill(1, sig);
  usleep(20000);
  int pids = 0; DIR *d = opendir("/proc"); while (auto e = readdir(d)) pids += isdigit(e->d_name[0]) != 0;
  out.push_back("pids " + std::to_string(pids));
  for (auto &s : out) std::cout << s << ' ';
  std::cout << '\n';
}
"""


def test_a_program_cannot_reach_its_test_init_whose_memory_is_the_launcher_s(sb: Sandbox) -> None:
    prog = sb.compile("cpp", REACH_INIT)
    assert prog.ok, prog.message
    results = sb.run(prog, [b"", b""], Limits(time_s=2))
    # EACCES (13) for /proc/1/mem and no maps (the runner's memory is not dumpable), EPERM (1)
    # from the filter for process_vm_readv and ptrace; the init shrugs the signals off (pid 1
    # with no handlers) and is still there, with the program, for the batch's next test
    assert [r.verdict for r in results] == [Verdict.OK, Verdict.OK], results
    assert [r.stdout.decode().split() for r in results] == [
        ["13", "13", "maps-refused", "1", "1", "pids", "2"]] * 2, results[0].stdout


def test_bubblewrap_disables_user_namespaces_where_it_can(sb: Sandbox) -> None:
    import subprocess

    from sandbox.bwrap import BwrapSandbox

    assert isinstance(sb, BwrapSandbox)
    help_text = subprocess.run([sb.bwrap, "--help"], capture_output=True, text=True).stdout
    if "--disable-userns" not in help_text:
        pytest.skip("this bubblewrap has no --disable-userns (before 0.8)")
    assert sb.userns == ["--unshare-user", "--disable-userns"]


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and parent_pid(int(entry.name)) == pid:
                found.append(int(entry.name))
        except OSError:
            pass
    return found


def _comm(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/comm") as f:
            return f.read().strip()
    except OSError:
        return ""


def _ids(pid: int) -> tuple[list[str], list[str], list[str]]:
    fields = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines() if ":" in line)
    return fields["Uid"].split(), fields["Gid"].split(), fields["Groups"].split()


def test_programs_run_as_nobody_with_no_groups_on_the_host(sb: Sandbox) -> None:
    """Started by root, the sandbox (bubblewrap, the runner and the program) is nobody on the host,
    with no supplementary group: a kernel escape lands with no rights. Read from the host's /proc
    while a test sleeps (inside, the user namespaces show only their own ids)."""
    import os
    import threading
    import time

    if os.geteuid() != 0:
        pytest.skip("not root: the sandbox runs as this user")
    done: list[object] = []
    worker = threading.Thread(target=lambda: done.append(run_one(sb, "python3", "import time\ntime.sleep(2)\n",
                                                                  time_s=5)))
    worker.start()
    seen: dict[int, tuple[list[str], list[str], list[str]]] = {}
    deadline = time.monotonic() + 30
    while worker.is_alive() and time.monotonic() < deadline and len(seen) < 4:
        # our other children (the tests' Redis) are not the sandbox's
        stack = [pid for pid in _children(os.getpid()) if _comm(pid) == "bwrap"]
        while stack:
            pid = stack.pop()
            try:
                seen[pid] = _ids(pid)
            except OSError:
                continue
            stack += _children(pid)
        time.sleep(0.05)
    worker.join()
    assert len(seen) >= 4, seen  # bubblewrap, its init, the runner, the program (and more)
    for uid, gid, groups in seen.values():
        assert (uid, gid, groups) == (["65534"] * 4, ["65534"] * 4, []), seen


def test_java_cannot_unshare_and_runs_filtered(sb: Sandbox) -> None:
    result = run_one(sb, "java", SYSCALLS_JAVA)
    assert result.verdict == Verdict.OK, result
    assert result.stdout.decode().split("\n")[:2] == ["unshare_tool 1 true", "Seccomp:\t2"]


# -- no state crosses tests ------------------------------------------------------

KEY = 0x4854530D
STATE_CPP = (
    "#include <bits/stdc++.h>\n#include <dirent.h>\n#include <fcntl.h>\n#include <unistd.h>\n#include <sys/ipc.h>\n"
    "#include <sys/shm.h>\n#include <sys/sem.h>\n#include <sys/msg.h>\n#include <sys/mman.h>\n#include <sys/socket.h>\n"
    "#include <sys/un.h>\n#include <sys/syscall.h>\n#include <linux/keyctl.h>\n"
    f"const key_t K={KEY};\n"
    "static sockaddr_un abstract(socklen_t&len){sockaddr_un a{}; a.sun_family=AF_UNIX;\n"
    " memcpy(a.sun_path, \"\\0hts-canary\", 11); len=sizeof(sa_family_t)+11; return a;}\n"
    "static std::string look(){std::string f;\n"
    " if(shmget(K,0,0)>=0) f+=\" shm\"; if(semget(K,0,0)>=0) f+=\" sem\"; if(msgget(K,0)>=0) f+=\" msg\";\n"
    " if(syscall(SYS_request_key,\"user\",\"hts-canary\",0,0)>=0) f+=\" key\";\n"
    " if(access(\"/dev/shm/hts-canary\",F_OK)==0) f+=\" posix-shm\"; if(access(\"/tmp/hts-canary\",F_OK)==0) f+=\" tmp\";\n"
    " int s=socket(AF_UNIX,SOCK_STREAM,0); socklen_t len; sockaddr_un a=abstract(len);\n"
    " if(connect(s,(sockaddr*)&a,len)==0) f+=\" abstract\"; close(s);\n"
    " int n=0; DIR*d=opendir(\"/proc\"); while(auto e=readdir(d)) if(isdigit(e->d_name[0])) n++; closedir(d);\n"
    " if(n>2) f+=\" process\"; return f;}\n"
    "static void plant(){shmget(K,4096,IPC_CREAT|0666); semget(K,1,IPC_CREAT|0666); msgget(K,IPC_CREAT|0666);\n"
    " syscall(SYS_add_key,\"user\",\"hts-canary\",\"x\",1,KEY_SPEC_USER_KEYRING);\n"
    " syscall(SYS_add_key,\"user\",\"hts-canary\",\"x\",1,KEY_SPEC_SESSION_KEYRING);\n"
    " close(shm_open(\"/hts-canary\",O_CREAT|O_RDWR,0666)); std::ofstream(\"/tmp/hts-canary\")<<\"x\";\n"
    " int s=socket(AF_UNIX,SOCK_STREAM,0); socklen_t len; sockaddr_un a=abstract(len); bind(s,(sockaddr*)&a,len); listen(s,4);\n"
    " if(fork()==0){setsid(); for(;;) pause();}}\n"
    "int main(){std::string m; std::cin>>m;\n"
    " if(m==\"plant\"){plant(); puts(\"planted\"); return 0;}\n"
    " if(m==\"look\"){printf(\"found:%s\\n\", look().c_str()); return 0;}\n"
    " std::string f=look(); if(!f.empty()){printf(\"FORGED%s\\n\", f.c_str()); return 0;}\n"
    " plant(); while((double)clock()/CLOCKS_PER_SEC<1.0){} puts(\"honest\");}\n"
)
STATE_PY = (
    "import ctypes, os, socket, sys, time\nlibc = ctypes.CDLL(None, use_errno=True)\n"
    f"K = {KEY}\n"
    "def look():\n    f = []\n"
    "    if libc.shmget(K, 0, 0) >= 0: f.append('shm')\n    if libc.semget(K, 0, 0) >= 0: f.append('sem')\n"
    "    if libc.msgget(K, 0) >= 0: f.append('msg')\n"
    "    if libc.syscall(249, b'user', b'hts-canary', 0, 0) >= 0: f.append('key')\n"
    "    if os.path.exists('/dev/shm/hts-canary'): f.append('posix-shm')\n"
    "    if os.path.exists('/tmp/hts-canary'): f.append('tmp')\n"
    "    s = socket.socket(socket.AF_UNIX)\n    try:\n        s.connect('\\0hts-canary'); f.append('abstract')\n"
    "    except OSError:\n        pass\n"
    "    if len([p for p in os.listdir('/proc') if p.isdigit()]) > 2: f.append('process')\n    return f\n"
    "def plant():\n    libc.shmget(K, 4096, 0o1666); libc.semget(K, 1, 0o1666); libc.msgget(K, 0o1666)\n"
    "    libc.syscall(248, b'user', b'hts-canary', b'x', 1, -4)\n    libc.syscall(248, b'user', b'hts-canary', b'x', 1, -3)\n"
    "    open('/dev/shm/hts-canary', 'w').write('x'); open('/tmp/hts-canary', 'w').write('x')\n"
    "    s = socket.socket(socket.AF_UNIX); s.bind('\\0hts-canary'); s.listen()\n"
    "    if os.fork() == 0:\n        os.setsid()\n        while True:\n            time.sleep(100)\n"
    "mode = input().strip()\n"
    "if mode == 'plant':\n    plant(); print('planted')\n"
    "elif mode == 'look':\n    print('found:' + ''.join(' ' + x for x in look()))\n"
    "else:\n    f = look()\n    if f:\n        print('FORGED', *f); sys.exit(0)\n"
    "    plant()\n    while time.process_time() < 1.0:\n        pass\n    print('honest')\n"
)
STATE_JAVA = (
    "import java.nio.file.*;\nimport java.util.*;\npublic class Main {\n"
    "static long rows(String p) throws Exception { return Files.readAllLines(Paths.get(p)).size() - 1; }\n"
    "static String look() throws Exception { StringBuilder f = new StringBuilder();\n"
    " if (rows(\"/proc/sysvipc/shm\") > 0) f.append(\" shm\"); if (rows(\"/proc/sysvipc/sem\") > 0) f.append(\" sem\");\n"
    " if (rows(\"/proc/sysvipc/msg\") > 0) f.append(\" msg\");\n"
    " if (Files.exists(Paths.get(\"/dev/shm/hts-canary\"))) f.append(\" posix-shm\");\n"
    " if (Files.exists(Paths.get(\"/tmp/hts-canary\"))) f.append(\" tmp\");\n"
    " if (ProcessHandle.allProcesses().count() > 2) f.append(\" process\"); return f.toString(); }\n"
    "static void plant() throws Exception { for (String o : new String[]{\"-M\", \"-Q\", \"-S\"}) {\n"
    "  String[] cmd = o.equals(\"-Q\") ? new String[]{\"/usr/bin/ipcmk\", o} : new String[]{\"/usr/bin/ipcmk\", o, \"1\"};\n"
    "  new ProcessBuilder(cmd).start().waitFor(); }\n"
    " Files.writeString(Paths.get(\"/dev/shm/hts-canary\"), \"x\"); Files.writeString(Paths.get(\"/tmp/hts-canary\"), \"x\");\n"
    " new ProcessBuilder(\"/usr/bin/sleep\", \"1000\").start(); }\n"
    "public static void main(String[] a) throws Exception { String m = new Scanner(System.in).next();\n"
    " if (m.equals(\"plant\")) { plant(); System.out.println(\"planted\"); return; }\n"
    " System.out.println(\"found:\" + look()); } }\n"
)
STATE = {"cpp": STATE_CPP, "python3": STATE_PY, "java": STATE_JAVA}


@pytest.mark.parametrize("language", ["cpp", "python3", "java"])
def test_state_planted_in_kernel_objects_is_absent_in_the_next_test(sb: Sandbox, language: str) -> None:
    prog = sb.compile(language, STATE[language])
    assert prog.ok, prog.message
    planted, seen = sb.run(prog, ["plant\n", "look\n"], Limits(time_s=5, wall_s=60))
    assert planted.verdict == Verdict.OK and planted.stdout == b"planted\n", planted
    assert seen.verdict == Verdict.OK, seen
    assert seen.stdout == b"found:\n"  # no shm, sem, msg, key, /dev/shm, /tmp, abstract socket, process


def test_planting_really_works_within_one_test(sb: Sandbox) -> None:
    # the probe is honest: what it plants, it finds again in the same test (keyrings excepted: denied)
    source = STATE_PY.replace("mode = input().strip()\n", "mode = input().strip()\nplant(); print(look()); mode = 'x'\n")
    result = run_one(sb, "python3", source.replace("print('FORGED', *f); sys.exit(0)", "sys.exit(0)"), "x\n")
    assert result.verdict == Verdict.OK, result
    found = result.stdout.decode().splitlines()[0]
    for kind in ("shm", "sem", "msg", "posix-shm", "tmp", "abstract", "process"):
        assert f"'{kind}'" in found
    assert "'key'" not in found


@pytest.mark.slow
@pytest.mark.parametrize("language", ["cpp", "python3"])
def test_borderline_rerun_is_a_fresh_sandbox_that_sees_nothing_of_the_first_run(
    sb: Sandbox, language: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the program burns 1.0 s of CPU under a 1 s limit (borderline: re-run); a re-run that
    # found anything of the first run would answer at once with FORGED and be kept as faster
    opened: list[object] = []
    original = type(sb).open_batch

    def counting(self: Sandbox, spec: object) -> object:
        opened.append(spec)
        return original(self, spec)  # type: ignore[arg-type]

    prog = sb.compile(language, STATE[language])
    monkeypatch.setattr(type(sb), "open_batch", counting)
    [result] = sb.run(prog, ["burn\n"], Limits(time_s=1, wall_s=60))
    assert result.stdout == b"honest\n", result
    assert len(opened) == 2  # the re-run got a sandbox of its own


@pytest.mark.skipif(platform.machine() != "x86_64", reason="x86_64 syscall numbers")
def test_judging_functions_and_validators_run_under_the_filter_too(sb: Sandbox) -> None:
    from sandbox import call_python

    code = ("import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n"
            "def probe():\n    r = libc.syscall(272, 0x10000000)\n    e = ctypes.get_errno()\n"
            "    k = libc.syscall(248, b'user', b'hts', b'v', 1, -2)\n"
            "    return [r, e, k, ctypes.get_errno(), open('/proc/self/status').read().count('Seccomp:\\t2')]\n")
    [result] = call_python(sb, code, "probe", [()], Limits(wall_s=60))
    assert result.ok, result.error
    assert result.value == [-1, 1, -1, 1, 1]  # unshare and add_key: EPERM; the filter is on
