"""Hostile programs in all three languages: each is contained, with the expected verdict, host untouched."""

from __future__ import annotations

import os
import socket
import subprocess
import threading
import types
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from sandbox import Limits, Sandbox, Verdict

from .conftest import REPO, run_one

LANGS = ["cpp", "python3", "java"]


def host_pids_running(marker: str) -> list[int]:
    """Processes whose command line holds `marker`, read straight from /proc (a ps would start
    tens of milliseconds after the moment of interest)."""
    found = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                with open(f"/proc/{entry.name}/cmdline", "rb") as cmdline:
                    if marker.encode() in cmdline.read():
                        found.append(int(entry.name))
            except OSError:
                pass
    return found


def host_processes_matching(marker: str) -> list[str]:
    out = subprocess.run(["ps", "-eo", "pid,args"], capture_output=True, text=True).stdout
    return [line for line in out.splitlines() if marker in line and "ps -eo" not in line]


FORK_BOMB = {
    "cpp": "#include <unistd.h>\nint main(){for(;;) fork();}\n",
    "python3": "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n",
    "java": "public class Main { public static void main(String[] a) throws Exception {\n"
            "while (true) { try { new ProcessBuilder(\"/usr/bin/sleep\", \"424242\").start(); }\n"
            "catch (Exception e) { } } } }\n",
}
# which limit a fork bomb reaches first (its processes' memory or the CPU) is a race, which
# may end differently from one run to the next on any backend
FORK_BOMB_VERDICTS = {Verdict.TLE, Verdict.MLE, Verdict.RE}


@pytest.mark.parametrize("language", LANGS)
def test_fork_bomb_is_contained(sb: Sandbox, language: str) -> None:
    result = run_one(sb, language, FORK_BOMB[language], time_s=0.5, wall_s=30)
    assert result.verdict in FORK_BOMB_VERDICTS
    assert result.verdict == Verdict.TLE or language == "java"
    assert host_processes_matching("424242") == []


# a program that answers correctly and leaves children behind it, each holding 96 MB (so that
# their end takes the kernel a while) and none holding the program's output open (which the
# runner would wait for), and tells us only once they all hold it
_HOLD = "import os, time\nb = b'\\x01' * (96 << 20)\nos.write({fd}, b'1')\ntime.sleep(434343)\n"
def leave_sleepers(language: str) -> str:
    """A program per language (not a module-level table: test_docker.py compares every such table's
    verdicts across backends under 256 MB, and these children hold 384 MB on purpose)."""
    return _LEAVE_SLEEPERS[language]


_LEAVE_SLEEPERS = types.MappingProxyType({
    "cpp": "#include <unistd.h>\n#include <fcntl.h>\n#include <cstdio>\n#include <cstring>\n#include <cstdlib>\n"
           "int main(int argc, char** argv){\n"
           "  if (argc > 2) { size_t n = 96u << 20; char* p = (char*)malloc(n); memset(p, 1, n);\n"
           "    if (write(atoi(argv[2]), \"1\", 1) != 1) return 1; for (;;) pause(); }\n"
           "  int fd[2]; if (pipe(fd)) return 1; char w[16]; snprintf(w, sizeof w, \"%d\", fd[1]);\n"
           "  for (int i = 0; i < 4; i++) if (fork() == 0) { dup2(open(\"/dev/null\", O_WRONLY), 1); dup2(1, 2);\n"
           "    execl(\"/proc/self/exe\", \"hold\", \"434343\", w, (char*)0); _exit(1); }\n"
           "  char c; for (int i = 0; i < 4; i++) if (read(fd[0], &c, 1) != 1) return 1;\n"
           "  puts(\"ok\"); return 0; }\n",
    "python3": "import os, sys\nr, w = os.pipe()\nos.set_inheritable(w, True)\n"
               "for _ in range(4):\n    if os.fork() == 0:\n"
               "        os.dup2(os.open('/dev/null', os.O_WRONLY), 1)\n        os.dup2(1, 2)\n"
               "        os.execv('/usr/bin/python3', ['python3', '-c', " + repr(_HOLD) + ".format(fd=w)])\n"
               "for _ in range(4):\n    os.read(r, 1)\nprint('ok')\n",
    "java": "public class Main { public static void main(String[] a) throws Exception {\n"
            "for (int i = 0; i < 40; i++) new ProcessBuilder(\"/usr/bin/sleep\", \"434343\").start();\n"
            "System.out.println(\"ok\"); System.exit(0); } }\n",
})


@pytest.mark.parametrize("language", LANGS)
def test_a_tests_leftovers_are_gone_when_its_answer_comes(sb: Sandbox, language: str) -> None:
    """Whoever reads a test's result (a lane, the API's answer, the next request) finds none of
    the processes it left on the machine, though the sandbox's own end comes after the answer."""
    prog = sb.compile(language, leave_sleepers(language))
    assert prog.ok, prog.message
    for _ in range(5):  # the kernel's end of the leftovers races the answer: without the
        # runner's wait, about one run in two finds some (ps would start too late to see them)
        [result] = sb.run(prog, [""], Limits(time_s=4, wall_s=30, memory_mb=1024))
        leftovers = host_pids_running("434343")
        assert result.verdict == Verdict.OK and result.stdout.strip() == b"ok", result
        assert leftovers == []


# two threads (or child processes) each burn 0.4 s of their own CPU time and end:
# 0.8 s in all, over a 0.6 s limit, whatever the wall clock does on a loaded machine
BURN_THREADS = {
    "cpp": "#include <thread>\n#include <vector>\n#include <ctime>\n"
           "static double cpu(){timespec t; clock_gettime(CLOCK_THREAD_CPUTIME_ID,&t); return t.tv_sec+t.tv_nsec/1e9;}\n"
           "int main(){std::vector<std::thread> t;\n"
           "for(int i=0;i<2;i++) t.emplace_back([]{while(cpu()<0.4){}});\n"
           "for(auto&th:t) th.join();}\n",
    "python3": "import os, time\nfor _ in range(2):\n    if os.fork() == 0:\n"
               "        while time.process_time() < 0.4:\n            pass\n        os._exit(0)\n"
               "os.wait()\nos.wait()\n",
    "java": "import java.lang.management.*;\npublic class Main { public static void main(String[] a) throws Exception {\n"
            "ThreadMXBean mx = ManagementFactory.getThreadMXBean(); Thread[] ts = new Thread[2];\n"
            "for (int i = 0; i < 2; i++) { ts[i] = new Thread(() -> {\n"
            "while (mx.getCurrentThreadCpuTime() < 400_000_000L) { } }); ts[i].start(); }\n"
            "for (Thread t : ts) t.join(); } }\n",
}


@pytest.mark.parametrize("language", LANGS)
def test_cpu_of_every_thread_and_child_counts(sb: Sandbox, language: str) -> None:
    result = run_one(sb, language, BURN_THREADS[language], time_s=0.6, wall_s=30)
    assert result.verdict == Verdict.TLE
    assert result.time_ms >= 600


@pytest.fixture
def tcp_server() -> Iterator[tuple[int, list[bytes]]]:
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen()
    server.settimeout(0.2)
    accepted: list[bytes] = []
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            accepted.append(conn.recv(100))
            conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield server.getsockname()[1], accepted
    stop.set()
    thread.join()
    server.close()


CONNECT = {
    "cpp": "#include <bits/stdc++.h>\n#include <arpa/inet.h>\n#include <sys/socket.h>\n"
           "int main(){int port; std::cin>>port; int s=socket(AF_INET,SOCK_STREAM,0); sockaddr_in a{};\n"
           "a.sin_family=AF_INET; a.sin_port=htons(port); inet_pton(AF_INET,\"127.0.0.1\",&a.sin_addr);\n"
           "if(connect(s,(sockaddr*)&a,sizeof a)==0){write(s,\"leak\",4); puts(\"CONNECTED\");} else puts(\"BLOCKED\");}\n",
    "python3": "import socket\nport = int(input())\ntry:\n    s = socket.create_connection(('127.0.0.1', port), 1)\n"
               "    s.sendall(b'leak')\n    print('CONNECTED')\nexcept OSError:\n    print('BLOCKED')\n",
    "java": "import java.net.*;\nimport java.util.*;\npublic class Main { public static void main(String[] a) {\n"
            "int port = new Scanner(System.in).nextInt(); try (Socket s = new Socket(\"127.0.0.1\", port)) {\n"
            "s.getOutputStream().write(\"leak\".getBytes()); System.out.println(\"CONNECTED\"); }\n"
            "catch (Exception e) { System.out.println(\"BLOCKED\"); } } }\n",
}


@pytest.mark.parametrize("language", LANGS)
def test_no_network_to_a_host_server(sb: Sandbox, language: str, tcp_server: tuple[int, list[bytes]]) -> None:
    port, accepted = tcp_server
    result = run_one(sb, language, CONNECT[language], f"{port}\n")
    assert result.verdict == Verdict.OK
    assert result.stdout.strip() == b"BLOCKED"
    assert accepted == []


SNOOP = {
    "cpp": "#include <bits/stdc++.h>\nextern char **environ;\nint main(){std::string p;\n"
           "while(std::cin>>p){std::ifstream f(p); std::cout<<p<<(f.good()?\" READABLE\":\" MISSING\")<<\"\\n\";}\n"
           "for(char**e=environ;*e;e++) std::cout<<\"ENV \"<<*e<<\"\\n\";}\n",
    "python3": "import os, sys\nfor p in sys.stdin.read().split():\n    try:\n        open(p, 'rb').read(1)\n"
               "        print(p, 'READABLE')\n    except OSError:\n        print(p, 'MISSING')\n"
               "for k, v in os.environ.items():\n    print('ENV', k + '=' + v)\n",
    "java": "import java.nio.file.*;\nimport java.util.*;\npublic class Main { public static void main(String[] a) {\n"
            "Scanner s = new Scanner(System.in); while (s.hasNext()) { String p = s.next();\n"
            "System.out.println(p + (Files.isReadable(Paths.get(p)) ? \" READABLE\" : \" MISSING\")); }\n"
            "for (Map.Entry<String, String> e : System.getenv().entrySet())\n"
            "System.out.println(\"ENV \" + e.getKey() + \"=\" + e.getValue()); } }\n",
}


@pytest.mark.parametrize("language", LANGS)
def test_project_files_database_and_secrets_are_invisible(
    sb: Sandbox, language: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = f"canary-{uuid.uuid4().hex}"
    monkeypatch.setenv("HARDTESTS_SECRET_CANARY", secret)
    monkeypatch.setenv("DATABASE_URL", f"postgres://user:{secret}@db/x")
    db = REPO / "var" / "db.sqlite3"
    db.parent.mkdir(exist_ok=True)
    created = not db.exists()
    if created:
        db.write_bytes(b"SQLite format 3\x00")
    try:
        paths = [REPO / "pyproject.toml", db, REPO / "sandbox" / "runner.c", Path("/root/.bashrc"),
                 Path("/etc/passwd"), Path(f"/proc/{os.getpid()}/environ")]
        result = run_one(sb, language, SNOOP[language], "\n".join(map(str, paths)) + "\n")
    finally:
        if created:
            db.unlink()
    assert result.verdict == Verdict.OK
    out = result.stdout.decode()
    for path in paths:
        assert f"{path} MISSING" in out
    assert secret not in out and secret not in result.stderr
    assert "HARDTESTS_SECRET_CANARY" not in out and "DATABASE_URL" not in out


WRITER = {
    "cpp": "#include <bits/stdc++.h>\nint main(){std::string p;\n"
           "while(std::cin>>p){std::ofstream f(p); f<<\"x\"; f.close();\n"
           "std::cout<<p<<(f.fail()?\" DENIED\":\" WRITTEN\")<<\"\\n\";}}\n",
    "python3": "import sys\nfor p in sys.stdin.read().split():\n    try:\n        open(p, 'w').write('x')\n"
               "        print(p, 'WRITTEN')\n    except OSError:\n        print(p, 'DENIED')\n",
    "java": "import java.nio.file.*;\nimport java.util.*;\npublic class Main { public static void main(String[] a) {\n"
            "Scanner s = new Scanner(System.in); while (s.hasNext()) { String p = s.next();\n"
            "try { Files.writeString(Paths.get(p), \"x\"); System.out.println(p + \" WRITTEN\"); }\n"
            "catch (Exception e) { System.out.println(p + \" DENIED\"); } } } }\n",
}


@pytest.mark.parametrize("language", LANGS)
def test_writes_outside_scratch_fail(sb: Sandbox, language: str) -> None:
    name = f"hts-escape-{uuid.uuid4().hex[:8]}"
    outside = [f"/{name}", f"/usr/{name}", f"/etc/{name}", f"/dev/{name}", f"/.hts-prog/{name}",
               str(REPO / name), f"/root/{name}"]
    result = run_one(sb, language, WRITER[language], "\n".join([*outside, f"/tmp/{name}", name]) + "\n")
    out = result.stdout.decode()
    for path in outside:
        assert f"{path} DENIED" in out
        assert not Path(path).exists()
    assert f"/tmp/{name} WRITTEN" in out and f"\n{name} WRITTEN" in out  # scratch (and cwd) is writable


KILLER = {
    # the parent, the PID namespace's init, everything visible, and the program's own process
    # group (0) after leaving it, which would be the runner's if the program were still in it
    "cpp": "#include <signal.h>\n#include <unistd.h>\n#include <cstdio>\n"
           "int main(){kill(getppid(),SIGKILL); kill(1,SIGKILL); kill(-1,SIGKILL);\n"
           "signal(SIGTERM,SIG_IGN); kill(0,SIGTERM); kill(-getpgrp(),SIGTERM); puts(\"survived\");}\n",
    "python3": "import os, signal\nfor pid in (os.getppid(), 1, -1):\n    try:\n        os.kill(pid, signal.SIGKILL)\n"
               "    except OSError:\n        pass\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
               "for pid in (0, -os.getpgrp()):\n    try:\n        os.kill(pid, signal.SIGTERM)\n"
               "    except OSError:\n        pass\nprint('survived')\n",
    "java": "public class Main { public static void main(String[] a) throws Exception {\n"
            "new ProcessBuilder(\"/usr/bin/kill\", \"-9\", \"-1\").start().waitFor();\n"
            "ProcessHandle.allProcesses().forEach(p -> p.destroyForcibly()); System.out.println(\"survived\"); } }\n",
}


@pytest.mark.parametrize("language", LANGS)
def test_killing_the_parent_or_everything_visible_harms_nothing(sb: Sandbox, language: str) -> None:
    prog = sb.compile(language, KILLER[language])
    results = sb.run(prog, ["", "", ""], Limits())
    # the runner survives: every test of the batch runs and reports
    assert len(results) == 3
    assert all(r.stdout == b"survived\n" or r.verdict != Verdict.SE for r in results)
    assert all(r.verdict in (Verdict.OK, Verdict.RE) for r in results)
    if language != "java":
        assert [r.verdict for r in results] == [Verdict.OK] * 3


# the first test leaves background processes and files; the second looks for them
LEAVER = {
    "python3": "import os, subprocess, sys\nmode = input().strip()\n"
               "if mode == 'leave':\n"
               "    subprocess.Popen(['/usr/bin/sleep', '313373'], start_new_session=True)\n"
               "    if os.fork() == 0:\n        os.setsid()\n"
               "        while True:\n            open('/tmp/alive', 'w').write('x')\n"
               "    open('/tmp/leak', 'w').write('secret'); open('/dev/shm/leak', 'w').write('secret')\n"
               "    print('left')\n"
               "else:\n"
               "    pids = sorted(int(p) for p in os.listdir('/proc') if p.isdigit())\n"
               "    cmds = [open(f'/proc/{p}/cmdline', 'rb').read().replace(b'\\0', b' ').decode() for p in pids]\n"
               "    files = sorted(os.listdir('/tmp') + os.listdir('/dev/shm'))\n"
               "    print(len(pids), files, cmds)\n",
    "cpp": "#include <bits/stdc++.h>\n#include <unistd.h>\n#include <dirent.h>\nint main(){std::string m; std::cin>>m;\n"
           "if(m==\"leave\"){ if(fork()==0){setsid(); execl(\"/usr/bin/sleep\",\"sleep\",\"313374\",(char*)0);}\n"
           "std::ofstream(\"/tmp/leak\")<<\"secret\"; std::ofstream(\"/dev/shm/leak\")<<\"secret\"; puts(\"left\"); return 0;}\n"
           "int n=0; DIR*d=opendir(\"/proc\"); while(auto e=readdir(d)) if(isdigit(e->d_name[0])) n++;\n"
           "int f=0; for(const char* dir: {\"/tmp\", \"/dev/shm\"}){DIR*t=opendir(dir); while(auto e=readdir(t))\n"
           " if(e->d_name[0]!='.') f++;} printf(\"%d %d\\n\", n, f);}\n",
    "java": "import java.io.*;\nimport java.nio.file.*;\nimport java.util.*;\npublic class Main {\n"
            "public static void main(String[] a) throws Exception { String m = new Scanner(System.in).next();\n"
            "if (m.equals(\"leave\")) { new ProcessBuilder(\"/usr/bin/sleep\", \"313375\").start();\n"
            "Files.writeString(Paths.get(\"/tmp/leak\"), \"secret\"); System.out.println(\"left\"); return; }\n"
            "long others = ProcessHandle.allProcesses().count(); String[] files = new File(\"/tmp\").list();\n"
            "System.out.println(others + \" \" + files.length); } }\n",
}


@pytest.mark.parametrize("language", LANGS)
def test_background_children_and_files_do_not_survive_into_the_next_test(sb: Sandbox, language: str) -> None:
    prog = sb.compile(language, LEAVER[language])
    first, second = sb.run(prog, ["leave\n", "look\n"], Limits(time_s=2))
    assert first.verdict == Verdict.OK and first.stdout == b"left\n"
    assert second.verdict == Verdict.OK, second.stderr
    out = second.stdout.decode()
    if language == "python3":
        count = int(out.split()[0])
        # only the test's own init (pid 1) and the program itself are visible
        assert count <= 2 and "[]" in out and "sleep" not in out and "python" in out
    elif language == "cpp":
        assert out.split() == ["2", "0"]
    else:
        others, files = map(int, out.split())
        assert others <= 2 and files == 0  # ProcessHandle sees the init and the JVM, nothing left behind
    for marker in ("313373", "313374", "313375"):
        assert host_processes_matching(marker) == []


def test_other_processes_are_invisible_in_proc(sb: Sandbox) -> None:
    source = ("import os\nfor p in sorted(os.listdir('/proc')):\n    if p.isdigit():\n"
              "        print(p, open(f'/proc/{p}/cmdline', 'rb').read().replace(b'\\0', b' ').decode())\n")
    result = run_one(sb, "python3", source)
    lines = result.stdout.decode().splitlines()
    assert len(lines) <= 2
    assert "pytest" not in result.stdout.decode() and "bwrap" not in result.stdout.decode()


RECURSION = {
    "cpp": "#include <cstdio>\nint f(int n){volatile int pad[8]; pad[0]=n; return n==0?0:1+f(n-1)+pad[0]*0;}\n"
           "int main(){printf(\"%d\\n\", f(1000000));}\n",
    "python3": "import sys\nsys.setrecursionlimit(10**6)\ndef f(n):\n    return 0 if n == 0 else 1 + f(n - 1)\n"
               "print(f(100000))\n",
    "java": "public class Main { static int f(int n) { return n == 0 ? 0 : 1 + f(n - 1); }\n"
            "public static void main(String[] a) { System.out.println(f(100000)); } }\n",
}


@pytest.mark.parametrize("language", LANGS)
def test_deep_recursion_works_with_the_memory_limit_as_stack(sb: Sandbox, language: str) -> None:
    result = run_one(sb, language, RECURSION[language], memory_mb=512)
    assert result.verdict == Verdict.OK, result.stderr
    assert result.stdout.strip() in (b"1000000", b"100000")


def test_infinite_recursion_is_contained(sb: Sandbox) -> None:
    result = run_one(sb, "cpp", "int f(int n){volatile int x[64]; x[0]=n; return f(n+1)+x[0];}\n"
                                "int main(){return f(0);}\n", memory_mb=64)
    assert result.verdict in (Verdict.RE, Verdict.MLE)
