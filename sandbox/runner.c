/*
 * hts-runner: the small process that lives inside one bubblewrap sandbox and
 * runs every test of a batch.  It is written in C because the per-test cost
 * must stay around a millisecond: one clone + one fork + one execve per test.
 *
 * Each test runs in fresh PID, mount, IPC and UTS namespaces, under a seccomp filter.  The first process of
 * the test (the "init", pid 1 of that namespace) mounts a fresh /tmp, /dev/shm
 * and /proc, hides the runner's private directories, joins the test cgroup and
 * forks the program.  When the program exits the init reports its rusage and
 * exits too; the kernel then kills every other process of that PID namespace,
 * which is how background children and setsid escapes are cleaned up.
 *
 * cgroups (optional; the trusted parent opens the control files, we inherit
 * the descriptors):
 *   -g (v1) mem procs, pids procs, cpuacct procs, memory.max_usage_in_bytes,
 *           memory.usage_in_bytes, memory.oom_control, cpuacct.usage, memory.stat,
 *           cpu procs (the batch's CPU cgroup, where cpu is a hierarchy of its own: the
 *           runner joins it at its start, so its launcher, zygote and tests are born in it)
 *   -G (v2) cgroup.procs, cpu.stat, cgroup.kill, memory.peak, memory.current,
 *           memory.events, memory.stat
 * "-1" for a file that is not there.  v1 counters are reset before each test;
 * v2's cpu.stat cannot be, so its usage_usec is read before and after, and
 * memory.peak is reset through our own descriptor (Linux >= 6.12).  A
 * cgroup.kill descriptor kills whatever is left of a test.
 *
 * Protocol (stdin/stdout, one test at a time):
 *   with -C, first: out "ready\n" once the sandbox waits for its limits; in
 *         "C <the limit options>\n" (see configure)
 *   with -L <nice> too (a spare): the runner, its launcher and its zygote wait at that
 *         nice value; the host brings them back to 0 before it sends "C", which the
 *         runner checks
 *   in:  "R <input-path or ->\n", or "P <input-path>\n": the same, the program's stdout
 *         being "<input-path>.out" (a FIFO: interactive judging), nothing captured
 *   out: "S <status> <cpu_us> <wall_us> <maxrss_kb> <cg_cpu_us> <cg_mem_kb>
 *         <oom> <killed: 1 cpu, 2 wall (idle), 3 output, 4 wall (starved)> <out_len> <out_trunc>
 *         <err_len>\n" + stdout + stderr tail
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <linux/securebits.h>
#include <seccomp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define ERR_TAIL 4096

/* the first three are the cgroup.procs files to join (v1: one per hierarchy) */
enum { CG_PROCS_1, CG_PROCS_2, CG_PROCS_3, CG_MEM_MAX, CG_MEM_USAGE, CG_MEM_OOM, CG_CPU_USAGE, CG_KILL, CG_MEM_STAT,
       CG_CPU_PROCS, CG_N };
/* where each descriptor of -g and -G goes (the later ones last: an older caller may leave them out) */
static const int cg_v1_slots[] = {CG_PROCS_1, CG_PROCS_2, CG_PROCS_3, CG_MEM_MAX, CG_MEM_USAGE, CG_MEM_OOM, CG_CPU_USAGE,
                                  CG_MEM_STAT, CG_CPU_PROCS};
static const int cg_v2_slots[] = {CG_PROCS_1, CG_CPU_USAGE, CG_KILL, CG_MEM_MAX, CG_MEM_USAGE, CG_MEM_OOM, CG_MEM_STAT};

static long long cpu_kill_us = 10000000, wall_kill_us = 30000000, starved_kill_us = -1;
/* -e: stop a test whose CPU time has not grown for this long while none of its tasks waited
 * for a CPU (compiles: a compiler that reads a pipe or a terminal waits forever); 0 never */
static long long idle_kill_us = 0;
static long long as_bytes = 0, fsize_bytes = 64 << 20, stack_bytes = 0, tmpfs_bytes = 256 << 20;
static long nproc = 64, nofile = 256;
static int cg[CG_N];
static int cg_v2 = 0;
static const char *workdir = "/tmp", *iodir = "/.hts-io", *indir = "/.hts-in";
static char **prog_argv;
/* -N: no namespaces of our own (inside a Docker container, where the runner is
 * pid 1 of the container's PID namespace and kills everything else after each
 * test instead) */
static int flat_mode = 0;
/* the current command is "P" (interactive judging): the program's stdout is the file
 * "<input>.out" (a FIFO to its interactor, which the host holds open while both sides
 * start) instead of the captured pipe */
static int piped = 0;
/* -Z: the Python zygote (runner_zygote.h), a process of the batch that is no test's */
static pid_t zpid = -1;

/* cg_err: why the init could not join the test cgroup (errno), 0 if it did or there is none */
struct report { int status, cg_err; long long cpu_us, maxrss_kb; };

static long long now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* set where processes share their memory (the launcher and its test inits): exit(2) there
 * would run atexit handlers and flush stdio buffers that belong to both */
static int die_quick = 0;

static void die(const char *what) {
    fprintf(stderr, "hts-runner: %s: %s\n", what, strerror(errno));
    if (die_quick) _exit(2);
    exit(2);
}

/* ---- the seccomp filter ------------------------------------------------
 * Built once per batch with libseccomp (the rules below, compiled to BPF by
 * the library) and installed in every program just before execve, after the
 * capabilities are gone and no_new_privs is set.  A denied call fails with
 * EPERM, which the program may handle; nothing is killed.  clone3 gets ENOSYS
 * instead: its flags live in memory, where a filter cannot look, and glibc
 * (pthread_create, posix_spawn) falls back to clone on ENOSYS, whose flags
 * the filter does see.  libseccomp is loaded with dlopen so that the runner
 * keeps its one-line build (the same binary serves the Docker backend); a
 * missing library is a fatal error, never a sandbox without a filter. */
static const char *const denied_calls[] = {
    /* namespaces and mounts: the kernel code behind them is where escapes live */
    "unshare", "setns", "mount", "umount2", "pivot_root", "chroot", "open_tree", "move_mount",
    "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr",
    /* kernel keyrings: state that outlives a process and crosses tests */
    "add_key", "keyctl", "request_key",
    /* large or privileged kernel surfaces */
    "bpf", "perf_event_open", "userfaultfd", "io_uring_setup", "io_uring_enter", "io_uring_register",
    /* other processes' memory */
    "ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd", "kcmp",
    /* the machine itself */
    "init_module", "finit_module", "delete_module", "kexec_load", "kexec_file_load", "reboot",
    "swapon", "swapoff", "syslog", "acct", "quotactl", "open_by_handle_at", "name_to_handle_at",
    "lookup_dcookie", "fanotify_init", "settimeofday", "clock_settime", "clock_adjtime", "adjtimex",
    /* the page cache's state, read without timing: which pages of a file are resident */
    "mincore",
    /* Linux AIO: RWF_NOWAIT in an iocb (memory the filter cannot see) probes the page cache */
    "io_setup", "io_submit",
};
/* Calls that succeed and do nothing: advice a program may give but must not act on.
 * Evicting pages of shared files (fadvise DONTNEED, madvise PAGEOUT/COLD below) writes
 * state that the next program of anyone reads (its timing, its memory charge); readahead
 * only warms pages, which reading does too, but it is a free write with no CPU cost.
 * Scheduling: a program that lowers its own priority or pins its threads to one CPU
 * makes the machine withhold the CPU from it, which must never pass for an overloaded
 * machine (SE): every test runs at the same priority on any CPU.  (The one priority no
 * system call sets, its session's autogroup nice in /proc/self/autogroup, is out of play
 * in the batch's CPU cgroup and checked by the runner: see sample_test.) */
static const char *const ignored_calls[] = {
    "fadvise64", "readahead", "setpriority", "sched_setscheduler", "sched_setattr", "sched_setparam",
    "sched_setaffinity", "ioprio_set",
};
#define CACHESTAT_NR 451 /* the same number on every architecture; libseccomp < 2.5.5 lacks the name */
#define HTS_RWF_NOWAIT 0x8
#define HTS_MADV_COLD 20
#define HTS_MADV_PAGEOUT 21
#define NS_FLAGS (CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET | 0x00000080 /* CLONE_NEWTIME */)
static struct sock_fprog filter;

#define SECCOMP_FN(name) __typeof__(name) *name##_fn = (__typeof__(name) *)dlsym(lib, #name)

static void build_filter(void) {
    void *lib = dlopen("libseccomp.so.2", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        fprintf(stderr, "hts-runner: cannot load libseccomp (apt-get install libseccomp2): %s\n", dlerror());
        exit(2);
    }
    SECCOMP_FN(seccomp_init);
    SECCOMP_FN(seccomp_rule_add);
    SECCOMP_FN(seccomp_syscall_resolve_name);
    SECCOMP_FN(seccomp_export_bpf);
    SECCOMP_FN(seccomp_release);
    if (!seccomp_init_fn || !seccomp_rule_add_fn || !seccomp_syscall_resolve_name_fn || !seccomp_export_bpf_fn ||
        !seccomp_release_fn) {
        fprintf(stderr, "hts-runner: libseccomp lacks a function we need\n");
        exit(2);
    }
    scmp_filter_ctx ctx = seccomp_init_fn(SCMP_ACT_ALLOW);
    if (!ctx) die("seccomp_init");
    /* a binary tree of syscall numbers (libseccomp 2.5+): the kernel checks every syscall
     * against the filter when each test installs it (its cache of always-allowed calls),
     * 160 us a test with a linear filter, 90 with the tree; older versions keep the list */
    SECCOMP_FN(seccomp_attr_set);
    if (seccomp_attr_set_fn) seccomp_attr_set_fn(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);
    int rc = 0;
    for (size_t i = 0; i < sizeof denied_calls / sizeof denied_calls[0] && rc == 0; i++) {
        int nr = seccomp_syscall_resolve_name_fn(denied_calls[i]);
        if (nr == __NR_SCMP_ERROR) continue; /* unknown to this libseccomp: older than the call */
        rc = seccomp_rule_add_fn(ctx, SCMP_ACT_ERRNO(EPERM), nr, 0);
    }
    for (size_t i = 0; i < sizeof ignored_calls / sizeof ignored_calls[0] && rc == 0; i++) {
        int nr = seccomp_syscall_resolve_name_fn(ignored_calls[i]);
        if (nr == __NR_SCMP_ERROR) continue;
        rc = seccomp_rule_add_fn(ctx, SCMP_ACT_ERRNO(0), nr, 0);
    }
    if (rc == 0) {
        int nr = seccomp_syscall_resolve_name_fn("cachestat");
        rc = seccomp_rule_add_fn(ctx, SCMP_ACT_ERRNO(EPERM), nr == __NR_SCMP_ERROR ? CACHESTAT_NR : nr, 0);
    }
    /* preadv2/pwritev2 with RWF_NOWAIT: "is this range in the page cache?" answered by EAGAIN */
    const char *const flagged_rw[] = {"preadv2", "pwritev2"};
    for (size_t i = 0; i < 2 && rc == 0; i++) {
        int nr = seccomp_syscall_resolve_name_fn(flagged_rw[i]);
        if (nr != __NR_SCMP_ERROR)
            rc = seccomp_rule_add_fn(ctx, SCMP_ACT_ERRNO(EOPNOTSUPP), nr, 1,
                                     SCMP_A5(SCMP_CMP_MASKED_EQ, HTS_RWF_NOWAIT, HTS_RWF_NOWAIT));
    }
    const int evicting[] = {HTS_MADV_COLD, HTS_MADV_PAGEOUT};
    for (size_t i = 0; i < 2 && rc == 0; i++)
        rc = seccomp_rule_add_fn(ctx, SCMP_ACT_ERRNO(0), SCMP_SYS(madvise), 1, SCMP_A2(SCMP_CMP_EQ, evicting[i]));
    /* clone with any namespace flag: one rule per flag (each rule tests one masked value) */
    for (unsigned long bit = 1; bit && rc == 0; bit <<= 1) {
        if (!(NS_FLAGS & bit)) continue;
        rc = seccomp_rule_add_fn(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1, SCMP_A0(SCMP_CMP_MASKED_EQ, bit, bit));
    }
    /* sockets: unix ones only, so no TCP or UDP state (TIME_WAIT ports, bound
     * ports) can carry anything from one test to the next, and no netlink */
    if (rc == 0) rc = seccomp_rule_add_fn(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(socket), 1, SCMP_A0(SCMP_CMP_NE, AF_UNIX));
    if (rc == 0) rc = seccomp_rule_add_fn(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(socketpair), 1, SCMP_A0(SCMP_CMP_NE, AF_UNIX));
    int nr3 = seccomp_syscall_resolve_name_fn("clone3");
    if (rc == 0 && nr3 != __NR_SCMP_ERROR) rc = seccomp_rule_add_fn(ctx, SCMP_ACT_ERRNO(ENOSYS), nr3, 0);
    if (rc != 0) {
        errno = -rc;
        die("seccomp_rule_add");
    }
    int mem = (int)syscall(SYS_memfd_create, "hts-filter", MFD_CLOEXEC);
    if (mem < 0) die("memfd_create");
    rc = seccomp_export_bpf_fn(ctx, mem);
    if (rc != 0) {
        errno = -rc;
        die("seccomp_export_bpf");
    }
    long size = lseek(mem, 0, SEEK_END);
    if (size <= 0 || size % sizeof(struct sock_filter)) die("seccomp filter size");
    filter.len = (unsigned short)(size / sizeof(struct sock_filter));
    filter.filter = malloc(size);
    if (!filter.filter || pread(mem, filter.filter, size, 0) != size) die("seccomp filter read");
    close(mem);
    seccomp_release_fn(ctx);
}

static void install_filter(void) {
    if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &filter) != 0) die("seccomp");
}

static long long cg_read(int fd) {
    char buf[64];
    if (fd < 0) return -1;
    ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
    if (n <= 0) return -1;
    buf[n] = 0;
    return atoll(buf);
}

/* The value of one "key value" line of a flat keyed file (memory.oom_control,
 * memory.events, cpu.stat). */
#define KEYED_MAX 8192 /* memory.stat is the longest (v2: ~1.5 KB of keys before the file ones) */

static int cg_keyed_read(int fd, char buf[KEYED_MAX]) {
    if (fd < 0) return -1;
    ssize_t n = pread(fd, buf, KEYED_MAX - 1, 0);
    if (n <= 0) return -1;
    buf[n] = 0;
    return 0;
}

static long long keyed_value(const char *buf, const char *key) {
    size_t len = strlen(key);
    for (const char *p = buf; (p = strstr(p, key)) != NULL; p += len) {
        if ((p == buf || p[-1] == '\n') && p[len] == ' ') return atoll(p + len + 1);
    }
    return -1;
}

static long long cg_keyed(int fd, const char *key) {
    char buf[KEYED_MAX];
    return cg_keyed_read(fd, buf) != 0 ? -1 : keyed_value(buf, key);
}

static long long cg_oom_kills(void) { return cg_keyed(cg[CG_MEM_OOM], "oom_kill"); }

/* Page cache of files (not tmpfs: shmem lives on the anon lists) charged to the test
 * cgroup, in bytes, -1 unknown.  A program is charged for the pages of a shared file it
 * brings in (the JDK's, evicted by someone else, or never read since boot): what it holds
 * is its memory, not that cache, so the peak it is reported leaves out the cache's growth. */
static long long cg_file_cache(void) {
    /* one read for both keys: the kernel formats the whole of memory.stat for each read */
    char buf[KEYED_MAX];
    if (cg_keyed_read(cg[CG_MEM_STAT], buf) != 0) return -1;
    long long active = keyed_value(buf, "active_file"), inactive = keyed_value(buf, "inactive_file");
    return active < 0 || inactive < 0 ? -1 : active + inactive;
}

/* CPU time of the test cgroup in microseconds: v1 cpuacct.usage is in
 * nanoseconds (and reset before each test), v2 has usage_usec in cpu.stat. */
static long long cg_cpu(void) {
    if (cg_v2) return cg_keyed(cg[CG_CPU_USAGE], "usage_usec");
    long long ns = cg_read(cg[CG_CPU_USAGE]);
    return ns < 0 ? -1 : ns / 1000;
}

static int cg_write(int fd, const char *s) {
    /* accounting only: a failure is not fatal, the caller decides what it means */
    return fd >= 0 && pwrite(fd, s, strlen(s), 0) >= 0;
}

/* Move the calling process into the test cgroup (before it forks, so every
 * descendant is accounted); 0 or the errno of the first failure. */
static int cg_join(void) {
    for (int i = CG_PROCS_1; i <= CG_PROCS_3; i++) {
        if (cg[i] >= 0 && !cg_write(cg[i], "0")) return errno ? errno : EIO;
    }
    return 0;
}

static void set_limit(int res, rlim_t soft, rlim_t hard) {
    struct rlimit rl = {soft, hard};
    if (setrlimit(res, &rl) != 0) die("setrlimit");
}

/* Whether this process's bounding set is already empty (and so that of every process it forks). */
static int bounding_set_empty = 0;

/* Empty the bounding set: no execve of this process or its descendants can gain a capability.
 * What the process holds now it keeps (the test init still mounts and clones).  Each drop is
 * a new set of credentials, so a runner that execs nothing (its tests are clones of it or of
 * its launcher) drops them once at its start rather than in every test (41 calls a test). */
static void drop_bounding_set(void) {
    /* capabilities are numbered from 0 with no gap: the first the kernel does not know
     * (EINVAL) ends them, where asking up to 63 made 22 more system calls */
    for (int c = 0; c <= 63; c++) {
        if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0) == 0) continue;
        if (errno != EINVAL) die("capbset");
        if (c == 0) die("capbset");
        break;
    }
}

/* The program runs as uid 0 of the sandbox's user namespace; without this it
 * would regain every capability of that namespace at execve. */
static void drop_capabilities(void) {
    if (flat_mode) {
        /* the container already runs with no capabilities and no-new-privileges */
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) die("no_new_privs");
        return;
    }
    if (prctl(PR_SET_SECUREBITS, SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |
              SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED) != 0) die("securebits");
    if (!bounding_set_empty) drop_bounding_set();
    prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
    struct __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct data[2];
    memset(data, 0, sizeof data);
    if (syscall(SYS_capset, &hdr, data) != 0) die("capset");
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) die("no_new_privs");
}

/* Everything between the fork of a program's process and the program: its standard
 * streams, a session of its own, its limits, no capabilities and the filter.  Shared by
 * exec_program and the Python zygote's program processes (hts_zygote_program). */
static void program_setup(int in_fd, int out_fd, int err_fd) {
    if (dup2(in_fd, 0) < 0 || dup2(out_fd, 1) < 0 || dup2(err_fd, 2) < 0) die("dup2");
    if (flat_mode) cg_join(); /* there is no init of our own to do it */
    syscall(SYS_close_range, 3, ~0U, 0);
    if (chdir(workdir) != 0) die("chdir");
    /* a session of its own: kill(0, ...) or killpg on its group must not reach the runner's */
    if (setsid() < 0) die("setsid");
    int fd = open("/proc/self/oom_score_adj", O_WRONLY);
    if (fd >= 0) {
        /* so that the kernel's OOM killer picks the program, not its init */
        if (write(fd, "1000", 4) < 0) { /* best effort */ }
        close(fd);
    }
    rlim_t cpu_s = (rlim_t)((cpu_kill_us + 999999) / 1000000);
    set_limit(RLIMIT_CPU, cpu_s, cpu_s + 1);
    if (as_bytes > 0) set_limit(RLIMIT_AS, as_bytes, as_bytes);
    set_limit(RLIMIT_FSIZE, fsize_bytes, fsize_bytes);
    set_limit(RLIMIT_NPROC, nproc, nproc);
    set_limit(RLIMIT_NOFILE, nofile, nofile);
    set_limit(RLIMIT_CORE, 0, 0);
    if (stack_bytes > 0) set_limit(RLIMIT_STACK, stack_bytes, stack_bytes);
    set_limit(RLIMIT_MEMLOCK, 0, 0);
    set_limit(RLIMIT_MSGQUEUE, 0, 0);
    /* the worker may have raised RLIMIT_NICE (to bring its spares back from -L itself); a
     * program gets none: it starts at nice 0 and can only lower its own priority */
    set_limit(RLIMIT_NICE, 0, 0);
    drop_capabilities();
    install_filter();
}

static void exec_program(int in_fd, int out_fd, int err_fd) {
    program_setup(in_fd, out_fd, err_fd);
    signal(SIGPIPE, SIG_DFL);
    char *envp[] = {"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/tmp", "LANG=C.UTF-8", "TMPDIR=/tmp", NULL};
    execve(prog_argv[0], prog_argv, envp);
    fprintf(stderr, "hts-runner: cannot execute %s: %s\n", prog_argv[0], strerror(errno));
    _exit(127);
}

/* An empty read-only tmpfs, mounted once per sandbox inside the runner's own directory:
 * each test's mount namespace binds it over the directories it must not see (a bind makes
 * no superblock, where a tmpfs per directory made two a test, each set up and torn down). */
static char empty_dir[300];

static void make_empty_dir(void) {
    snprintf(empty_dir, sizeof empty_dir, "%s/.empty", iodir);
    /* bubblewrap's mount namespace belongs to its outer user namespace (--disable-userns
     * nests ours), where we may not mount: a namespace of our own, as each test makes */
    if (unshare(CLONE_NEWNS) != 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0 ||
        mkdir(empty_dir, 0555) != 0 ||
        mount("tmpfs", empty_dir, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=4k,mode=0555") != 0)
        die("the empty directory that hides the runner's");
}

static void hide_dir(const char *path) {
    if (mount(empty_dir, path, NULL, MS_BIND, NULL) != 0) die("hide the runner's directories");
}

/* The test's own mounts, in the new mount namespace of its init (pid 1 of its PID namespace). */
static void test_mounts(void) {
    char opts[64];
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) die("mount private");
    snprintf(opts, sizeof opts, "size=%lld,mode=1777", tmpfs_bytes);
    if (mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, opts) != 0) die("mount /tmp");
    if (mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, opts) != 0) die("mount /dev/shm");
    if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) != 0) die("mount /proc");
    /* Hide the batch's inputs and the runner's files: bubblewrap's binds are locked in this
     * user namespace (umount2 fails with EINVAL), so an empty read-only tmpfs goes over each.
     * Without it a program reads every other test's input and writes files a later test sees. */
    hide_dir(indir);
    hide_dir(iodir); /* last: the empty directory lives in it */
}

/* In the launcher (below): whether (0) or why not (errno) it joined the test cgroup. */
static int in_launcher = 0, launcher_cg_err = 0;

/* The program's process until its execve: it shares the init's memory (CLONE_VM), on a stack
 * of its own, while the init waits (CLONE_VFORK), as posix_spawn does.  A fork copied the
 * init's page tables and both then took copy-on-write faults on every page they touched (and
 * resolved their first calls of each library function anew): a fifth of the runner's CPU per
 * test.  Everything the setup changes is the child's own even so: descriptors, working
 * directory, session, limits, capabilities, no_new_privs and the filter are per process or
 * per task (no CLONE_FILES, CLONE_FS, CLONE_THREAD), and the execve gives the program a memory
 * of its own before any of its code runs. */
struct program_fds { int in_fd, out_fd, err_fd; };
static char program_stack[64 * 1024] __attribute__((aligned(16)));

static int program_start(void *arg) {
    const struct program_fds *fds = arg;
    exec_program(fds->in_fd, fds->out_fd, fds->err_fd);
    return 127;
}

/* pid 1 of the test's PID namespace. */
static void test_init(int in_fd, int out_fd, int err_fd, int rep_fd) {
    die_quick = 1; /* a copy of the runner's memory or the launcher's own: not ours to flush */
    test_mounts();
    /* join the test cgroup before forking so every descendant is accounted (the
     * launcher's children are born in it) */
    int cg_err = in_launcher ? launcher_cg_err : cg_join();
    struct program_fds fds = {in_fd, out_fd, err_fd};
    /* the report's descriptor is close-on-exec, and the setup closes every descriptor past 2 */
    pid_t child = clone(program_start, program_stack + sizeof program_stack, CLONE_VM | CLONE_VFORK | SIGCHLD, &fds);
    if (child < 0) die("fork");
    close(in_fd);
    close(out_fd);
    close(err_fd);
    for (int i = 0; i < CG_N; i++) if (cg[i] >= 0) close(cg[i]);
    struct report r = {-1, cg_err, 0, 0};
    struct rusage ru;
    int st;
    while (wait4(child, &st, 0, &ru) < 0) {
        if (errno != EINTR) _exit(3);
    }
    r.status = st;
    r.cpu_us = (long long)ru.ru_utime.tv_sec * 1000000 + ru.ru_utime.tv_usec +
               (long long)ru.ru_stime.tv_sec * 1000000 + ru.ru_stime.tv_usec;
    r.maxrss_kb = ru.ru_maxrss;
    if (write(rep_fd, &r, sizeof r) != (ssize_t)sizeof r) _exit(4);
    _exit(0); /* the kernel now kills whatever else lives in this namespace */
}

#include "wipe_tree.h"

/* pid 1 of the container: kill every other process (background children,
 * setsid escapes), reap them, and wipe the scratch directories. */
static void flat_cleanup(pid_t session) {
    /* outside a container (tests of the runner itself) only the session dies,
     * and whatever is still in the test cgroup */
    cg_write(cg[CG_KILL], "1");
    kill(getpid() == 1 ? -1 : -session, SIGKILL);
    while (waitpid(-1, NULL, 0) > 0 || errno == EINTR) {}
    wipe_tree(open("/tmp", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    wipe_tree(open("/dev/shm", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
}

static void send_file(int fd, long long len, long long skip) {
    char buf[65536];
    long long off = skip, left = len;
    while (left > 0) {
        ssize_t n = pread(fd, buf, left < (long long)sizeof buf ? left : (long long)sizeof buf, off);
        if (n <= 0) break;
        fwrite(buf, 1, n, stdout);
        off += n;
        left -= n;
    }
    /* keep the framing exact even if the file shrank under us */
    for (; left > 0; left--) fputc(0, stdout);
}

/* The program's stdout and stderr are pipes that the runner drains: the runner
 * is not in the test's cgroup, so output is never charged as the program's
 * memory.  stdout goes to a file of the runner's (at most the output limit),
 * stderr keeps only its last ERR_TAIL bytes. */
struct sink {
    int fd;             /* read end, -1 once at EOF */
    long long total;    /* bytes the program wrote */
    int file;           /* stdout: where the kept bytes go; -1 for stderr */
    char tail[ERR_TAIL]; /* stderr: ring of the last bytes */
};

static void drain(struct sink *k) {
    char buf[65536];
    while (k->fd >= 0) {
        ssize_t n = read(k->fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return; /* EAGAIN: nothing more for now */
        if (n == 0) {
            close(k->fd);
            k->fd = -1;
            return;
        }
        if (k->file >= 0) {
            long long room = fsize_bytes - k->total;
            if (room > 0 && pwrite(k->file, buf, n < room ? n : room, k->total) < 0) { /* counted anyway */ }
        } else {
            for (ssize_t i = 0; i < n; i++) k->tail[(k->total + i) % ERR_TAIL] = buf[i];
        }
        k->total += n;
    }
}

/* ---- starvation, measured per test ---------------------------------------
 * "Starved" (the machine withheld the CPU from a test that wanted it: SE, never the
 * program's verdict) is measured on the test as a whole, from the scheduler's own figures of
 * each live task (/proc/<pid>/task/<tid>/schedstat: field 1 the time it ran, field 2 the
 * time it waited, runnable, for a CPU: its run delay).  What counts is the time in which
 * some task of the test waited while none of its tasks ran.  Between two looks (every
 * SAMPLE_US) a task i that ran dr_i and waited dw_i waited at least dw_i - (dC - dr_i) of
 * that time while no task of the test ran, dC being the CPU time of the whole test (its
 * cgroup) in between: the other tasks ran dC - dr_i at most.  The test's withheld time
 * grows by the largest of these (never below 0), so threads that wait for each other (a
 * thousand woken at once, sixteen spinning on two CPUs) count as the time the test itself
 * waited, not once per thread: a sum over threads counted each of them.  A task's run delay
 * grows only when it gets a CPU again, so a task seen runnable at two looks that did not run
 * in between (same run time, same count of timeslices: it cannot have slept without running)
 * is credited the whole interval as waiting now, and that credit is taken off its run delay
 * when the delay shows up; else a test waiting in stretches longer than the window would look
 * idle at the backstop.
 *
 * Nothing a program does raises that figure beyond what the machine did to it, as long as
 * its scheduling weight is the harness's: every test runs in the batch's CPU cgroup (a
 * weight set by the host, shared by all its threads and processes: a task outside the root
 * CPU cgroup is not scheduled by its session's autogroup), and the filter makes setpriority
 * and the sched_* calls no-ops.  Where there is no CPU cgroup, a session's autogroup nice
 * (/proc/<pid>/autogroup, which any member may raise) would lower the test's weight: the
 * same looks read it for each process, and a test that raised it is never starved (TLE at
 * the backstop, as a plain loop would be TLE on its CPU time).  Every process in our /proc
 * other than us, our ancestors (pid 1: bwrap's init, or ourselves in a container), the
 * launcher and the Python zygote belongs to the current test. */
static pid_t launcher_pid = -1;

#define SAMPLE_US 50000
#define TASKS_MAX 1024
struct task_seen { pid_t tid; char state; long long run_us, wait_us, slices, credit_us; };
static struct task_seen seen[2][TASKS_MAX];
static int seen_n[2], seen_cur, seen_overflow;
static long long seen_at_us;
/* since the test's start: the withheld time, its CPU time (cgroup, else what its live tasks
 * ran), and at the last look: when, and what its live tasks had run in all */
static long long withheld_us, sampled_cpu_us, sampled_at_us, live_cpu_us;
/* /proc could not be read (no figures: idle), a process raised its autogroup's nice value */
static int sched_unknown, weight_lowered;
/* at the last look, a task of the test was in uninterruptible sleep (D: the disk, a page
 * fault, writeback throttling): a compile in that state waits for the machine, not idle */
static int disk_waiting;

static void sample_reset(long long now) {
    seen_n[0] = seen_n[1] = seen_cur = seen_overflow = 0;
    withheld_us = sampled_cpu_us = live_cpu_us = 0;
    sampled_at_us = seen_at_us = now;
    sched_unknown = weight_lowered = disk_waiting = 0;
}

/* The nice value of a process's autogroup ("/autogroup-12 nice 19"), 0 if none. */
static int autogroup_nice(pid_t pid) {
    char path[64], buf[128];
    snprintf(path, sizeof path, "/proc/%d/autogroup", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return 0;
    buf[n] = 0;
    char *p = strstr(buf, " nice ");
    return p ? atoi(p + 6) : 0;
}

/* One look at the test's live tasks (see above); cpu0: the test cgroup's CPU figure at the
 * test's start, -1 without one. */
/* A task's state letter (R: running or runnable), from /proc/<pid>/task/<tid>/stat; 0 unknown. */
static char task_state(pid_t pid, const char *tid) {
    char path[320], buf[512];
    snprintf(path, sizeof path, "/proc/%d/task/%s/stat", pid, tid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return 0;
    buf[n] = 0;
    char *p = strrchr(buf, ')'); /* the name may hold anything, even ") R" */
    return p && p[1] == ' ' ? p[2] : 0;
}

static void sample_test(long long cpu0, long long now) {
    sampled_at_us = now;
    long long interval = now - seen_at_us;
    seen_at_us = now;
    DIR *d = opendir("/proc");
    if (!d) {
        sched_unknown = 1;
        return;
    }
    int next = 1 - seen_cur, n = 0, overflow = 0, in_d = 0;
    long long top = 0, ran = 0, live = 0;
    pid_t self = getpid();
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        pid_t pid = atoi(e->d_name);
        if (pid <= 1 || pid == self || pid == zpid || pid == launcher_pid) continue;
        if (autogroup_nice(pid) > 0) weight_lowered = 1;
        char path[64];
        snprintf(path, sizeof path, "/proc/%d/task", pid);
        DIR *t = opendir(path);
        if (!t) continue;
        struct dirent *te;
        while ((te = readdir(t)) != NULL) {
            if (te->d_name[0] == '.') continue;
            char spath[320], buf[256];
            snprintf(spath, sizeof spath, "/proc/%d/task/%s/schedstat", pid, te->d_name);
            int fd = open(spath, O_RDONLY | O_CLOEXEC);
            if (fd < 0) continue;
            ssize_t got = read(fd, buf, sizeof buf - 1);
            close(fd);
            long long run_ns = 0, wait_ns = 0, slices = 0;
            if (got <= 0) continue;
            buf[got] = 0;
            if (sscanf(buf, "%lld %lld %lld", &run_ns, &wait_ns, &slices) != 3) continue;
            pid_t tid = atoi(te->d_name);
            char state = task_state(pid, te->d_name);
            if (state == 'D') in_d = 1;
            long long run = run_ns / 1000, wait = wait_ns / 1000;
            struct task_seen *was = NULL;
            for (int i = 0; i < seen_n[seen_cur] && !was; i++)
                if (seen[seen_cur][i].tid == tid) was = &seen[seen_cur][i];
            /* a task born since the last look did all its running and waiting since; one not
             * kept last time (too many tasks) has unknown figures: count none */
            long long dr = run, dw = wait, credit = 0;
            if (was) {
                dr = run - was->run_us;
                dw = wait - was->wait_us;
                credit = was->credit_us;
            } else if (seen_overflow) {
                dr = dw = 0;
            }
            if (dr < 0) dr = 0;
            if (dw < 0) dw = 0;
            /* the run delay that shows up now was partly credited already */
            long long taken = dw < credit ? dw : credit;
            dw -= taken;
            credit -= taken;
            if (was && was->state == 'R' && state == 'R' && dr == 0 && slices == was->slices) {
                dw += interval; /* runnable all along, and never on a CPU: waiting now */
                credit += interval;
            }
            ran += dr;
            live += run;
            if (dr + dw > top) top = dr + dw;
            if (n < TASKS_MAX) seen[next][n++] = (struct task_seen){tid, state, run, wait, slices, credit};
            else overflow = 1;
        }
        closedir(t);
    }
    closedir(d);
    long long cpu = cpu0 >= 0 && cg[CG_CPU_USAGE] >= 0 ? cg_cpu() : -1;
    cpu = cpu < 0 ? -1 : cpu - cpu0;
    long long dcpu = cpu >= 0 ? cpu - sampled_cpu_us : ran;
    if (dcpu < ran) dcpu = ran; /* the cgroup read after the tasks': never less than they ran */
    if (top - dcpu > 0) withheld_us += top - dcpu;
    sampled_cpu_us = cpu >= 0 ? cpu : sampled_cpu_us + ran;
    live_cpu_us = live;
    seen_cur = next;
    seen_n[next] = n;
    seen_overflow = overflow;
    disk_waiting = in_d;
}

/* Whether the machine kept the test from running: over `span_us` of wall time in which
 * the test ran `cpu_us`, it was withheld (some task waited, none ran) at least half of
 * the time it was not running.  A sleeping, blocked or zombie test waits for nothing and is
 * idle; one that lowered its own weight is never starved. */
static int starved_over(long long span_us, long long cpu_us, long long withheld) {
    long long off_cpu = span_us - (cpu_us > 0 ? cpu_us : 0);
    return !weight_lowered && withheld > 0 && withheld * 2 >= off_cpu;
}

/* Whether a process of the test other than its init is still alive (or not yet reaped): a
 * program that forked and left children behind.  Same census as sample_test. */
static int test_leftovers(pid_t init) {
    DIR *d = opendir("/proc");
    if (!d) return 1; /* cannot tell: assume there are */
    struct dirent *e;
    pid_t self = getpid();
    int found = 0;
    while (!found && (e = readdir(d)) != NULL) {
        pid_t pid = atoi(e->d_name);
        found = !(pid <= 1 || pid == self || pid == zpid || pid == launcher_pid || pid == init);
    }
    closedir(d);
    return found;
}

#include "runner_zygote.h"

/* -C: the limits come later, on the first line of stdin ("C <options>", the same
 * options as the command line's): the sandbox is started before its batch is known
 * (bwrap.py keeps such spares) and says "ready" once it waits for them. */
static int configure_later = 0;
/* -L: a spare's nice value while it waits.  Starting a spare (the libseccomp compile, the
 * launcher, a Python zygote's interpreter) is work done ahead of need: it must not take
 * the CPU from the batches running now, or from their results on the way to the caller.
 * Going back to 0 needs a privilege we do not have in here (CAP_SYS_NICE on the host, or
 * an RLIMIT_NICE of 20): the host does it, and the runner refuses a batch before that. */
static int idle_nice = 0;

static int at_normal_priority(pid_t pid) {
    errno = 0;
    int nice = getpriority(PRIO_PROCESS, pid);
    return errno == 0 && nice <= 0;
}

static int option(int opt, char *arg) {
    switch (opt) {
    case 't': cpu_kill_us = atoll(arg); break;
    case 'w': wall_kill_us = atoll(arg); break;
    case 'W': starved_kill_us = atoll(arg); break;
    case 'e': idle_kill_us = atoll(arg); break;
    case 'm': as_bytes = atoll(arg); break;
    case 'f': fsize_bytes = atoll(arg); break;
    case 'p': nproc = atol(arg); break;
    case 'n': nofile = atol(arg); break;
    case 's': stack_bytes = atoll(arg); break;
    case 'z': tmpfs_bytes = atoll(arg); break;
    case 'd': workdir = arg; break;
    case 'o': iodir = arg; break;
    case 'i': indir = arg; break;
    case 'N': flat_mode = 1; break;
    case 'Z': zygote_mode = 1; break;
    case 'C': configure_later = 1; break;
    case 'L': idle_nice = atoi(arg); break;
    case 'I':
        if (!freopen(arg, "r", stdin)) die("commands file");
        break;
    case 'R':
        if (!freopen(arg, "w", stdout)) die("results file");
        break;
    case 'g':
    case 'G': {
        /* cgroup control files opened by the trusted parent: the sandbox
         * cannot open them itself (no /sys), it only inherits them */
        char *s = arg;
        cg_v2 = opt == 'G';
        int n = cg_v2 ? (int)(sizeof cg_v2_slots / sizeof cg_v2_slots[0]) : (int)(sizeof cg_v1_slots / sizeof cg_v1_slots[0]);
        for (int i = 0; i < n && s; i++) {
            cg[cg_v2 ? cg_v2_slots[i] : cg_v1_slots[i]] = atoi(s);
            s = strchr(s, ',');
            if (s) s++;
        }
        break;
    }
    default: return -1;
    }
    return 0;
}

/* The "C" line: the limits of the batch this started sandbox now serves. */
static int configure(char *line) {
    char *args[64];
    int n = 0;
    args[n++] = "hts-runner";
    for (char *tok = strtok(line + 1, " \n"); tok && n < 63; tok = strtok(NULL, " \n")) args[n++] = tok;
    args[n] = NULL;
    optind = 1;
    int opt;
    while ((opt = getopt(n, args, "t:w:W:e:m:f:p:n:s:z:d:")) != -1) {
        if (option(opt, optarg) != 0) return -1;
    }
    return optind == n ? 0 : -1;
}

/* ---- the launcher (cgroup v1) -------------------------------------------
 * Moving a process into a cgroup (a write to cgroup.procs) takes the kernel's
 * global cgroup_threadgroup_rwsem for writing, which waits for an RCU grace
 * period when no move happened in the last one: 7 ms here, paid by the first
 * test of every batch (then tests keep it warm, 20 us).  So the move happens
 * once, at the sandbox's start: the launcher, a child of the runner, joins
 * the test cgroup there and clones each test's init, which is born in it.  It
 * reports the init's pid, then its exit status once it has reaped it.  (Not
 * with cgroup v2: there cgroup.kill ends each test's cgroup whole, launcher
 * included; each init joins as before.  Nor with the zygote, whose programs
 * join themselves.) */
static int launcher = -1;
struct lmsg { int kind; pid_t pid; int status, cg_err; long long maxrss_kb; };
enum { LM_JOINED, LM_STARTED, LM_ENDED };

static int recv_fds(int sock, int *fds, int max) {
    char buf[8], control[CMSG_SPACE(sizeof(int) * 8)];
    struct iovec iov = {buf, sizeof buf};
    struct msghdr mh = {0};
    mh.msg_iov = &iov;
    mh.msg_iovlen = 1;
    mh.msg_control = control;
    mh.msg_controllen = sizeof control;
    ssize_t got;
    while ((got = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR) {}
    if (got <= 0) return -1;
    int n = 0;
    for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
        if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS) continue;
        int k = (int)((cm->cmsg_len - CMSG_LEN(0)) / sizeof(int));
        for (int i = 0; i < k; i++) {
            int fd;
            memcpy(&fd, CMSG_DATA(cm) + i * sizeof(int), sizeof fd);
            if (n < max) fds[n++] = fd;
            else close(fd);
        }
    }
    return n;
}

static void lsend(int sock, struct lmsg m) {
    while (send(sock, &m, sizeof m, MSG_NOSIGNAL) < 0) {
        if (errno != EINTR) _exit(0); /* the runner is gone */
    }
}

static struct lmsg lrecv(void) {
    struct lmsg m;
    ssize_t n;
    while ((n = recv(launcher, &m, sizeof m, 0)) < 0 && errno == EINTR) {}
    if (n != (ssize_t)sizeof m) {
        errno = EPIPE;
        die("the launcher is gone");
    }
    return m;
}

/* A test's init, cloned by the launcher into the launcher's own memory (CLONE_VM): a fork
 * copied the launcher's page tables for every test, and both then took copy-on-write faults
 * and the init's exit tore the copy down again (a tenth of the runner's CPU a test).  The
 * launcher meanwhile only reports the init's pid and waits for it (no allocation, no stdio:
 * nothing the two could both touch but its own stack); the init runs on a stack of its own
 * and its descriptors, namespaces, limits and credentials are its own (no CLONE_FILES,
 * CLONE_FS, CLONE_THREAD).  The launcher clones the next init only once this one has been
 * reaped, so the stack serves one init at a time. */
struct init_args { int fds[4]; int sock; };
static char init_stack[64 * 1024] __attribute__((aligned(16)));

static int init_start(void *arg) {
    const struct init_args *a = arg;
    close(a->sock);
    test_init(a->fds[0], a->fds[1], a->fds[2], a->fds[3]);
    return 0; /* test_init never returns */
}

static void launcher_main(int sock) {
    in_launcher = 1;
    /* the launcher and its inits share their memory: exit's atexit handlers and stdio
     * flushes, run from either, would act on the other's state */
    die_quick = 1;
    /* an out-of-memory kill of an init now takes the launcher with it (they share one memory),
     * as a kill of the launcher always did: the batch's sandbox error.  The program is the
     * killer's first choice while it lives (oom_score_adj 1000, program_setup). */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    int null = open("/dev/null", O_RDWR);
    if (null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0) _exit(2);
    close(null);
    launcher_cg_err = cg_join();
    lsend(sock, (struct lmsg){LM_JOINED, 0, 0, launcher_cg_err, 0});
    if (configure_later) {
        /* the runner's "C" line: each init and program it makes gets the batch's limits */
        static char config[4096];
        ssize_t n;
        while ((n = recv(sock, config, sizeof config - 1, 0)) < 0 && errno == EINTR) {}
        if (n <= 0) _exit(0);
        config[n] = 0;
        if (configure(config) != 0) _exit(2);
    }
    for (;;) {
        int fds[4];
        if (recv_fds(sock, fds, 4) != 4) _exit(0);
        /* static, as the stack: the init reads it while the launcher goes on */
        static struct init_args args;
        args = (struct init_args){{fds[0], fds[1], fds[2], fds[3]}, sock};
        pid_t init = clone(init_start, init_stack + sizeof init_stack,
                           CLONE_VM | CLONE_NEWPID | CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWUTS | SIGCHLD, &args);
        int err = init < 0 ? errno : 0;
        for (int i = 0; i < 4; i++) close(fds[i]);
        lsend(sock, (struct lmsg){LM_STARTED, init, 0, err, 0});
        if (init < 0) continue;
        int st = 0;
        struct rusage ru;
        memset(&ru, 0, sizeof ru);
        /* the next init reuses the stack: never clone it before this one is reaped */
        while (wait4(init, &st, 0, &ru) < 0) {
            if (errno != EINTR) _exit(2);
        }
        lsend(sock, (struct lmsg){LM_ENDED, init, st, 0, ru.ru_maxrss});
    }
}

static void start_launcher(void) {
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) die("socketpair");
    pid_t pid = fork();
    if (pid < 0) die("fork");
    if (pid == 0) {
        close(sv[0]);
        launcher_main(sv[1]);
    }
    close(sv[1]);
    launcher = sv[0];
    launcher_pid = pid;
    lrecv(); /* joined (or not: each test's report says why) */
}

/* The launcher's test init has ended: its status and rusage (the runner is not its parent). */
static void launcher_reaped(int *st, struct rusage *ru) {
    struct lmsg m = lrecv();
    *st = m.status;
    memset(ru, 0, sizeof *ru);
    ru->ru_maxrss = m.maxrss_kb;
}

/* ---- what a test leaves in the kernel ---------------------------------
 * A unix socket sent over a unix socket whose only reference is in flight (an SCM_RIGHTS
 * cycle) outlives every process of its test: its abstract name stays bound, and the files
 * in flight with it (a /dev/shm or memfd file of 200 MB) stay charged to the batch's
 * cgroup, until the kernel's unix garbage collector runs, which happens only when some
 * other unix socket is released later.  The next test must not meet either, so after each
 * test that left sockets behind (the count of /proc/net/unix, this sandbox's network
 * namespace, against the count before the first test), the runner starts a collection and
 * waits for it: it puts a socket of its own in flight on its own queue, a cycle, keeps its
 * peer, and releases another socket, which schedules the collector; the peer sees its
 * socket's end (POLLHUP) when the collector has freed the cycle, and with it every cycle
 * the test left (the program's and ours are found in the same pass). */
static int unix_baseline = -1;

static int unix_sockets(void) {
    int fd = open("/proc/net/unix", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    char buf[16384];
    int lines = 0;
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) > 0)
        for (ssize_t i = 0; i < n; i++) lines += buf[i] == '\n';
    close(fd);
    return lines;
}

static void collect_unix_garbage(void) {
    if (unix_baseline < 0) return;
    for (int round = 0; round < 4 && unix_sockets() > unix_baseline; round++) {
        int sv[2], other[2];
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) return;
        /* sent on sv[1], queued on sv[0] itself: once closed, sv[0] is garbage */
        send_fds(sv[1], "G", &sv[0], 1);
        close(sv[0]);
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, other) == 0) {
            close(other[0]);
            close(other[1]);
        }
        struct pollfd p = {sv[1], POLLRDHUP, 0};
        while (poll(&p, 1, 1000) < 0 && errno == EINTR) {}
        close(sv[1]);
        /* the collector's frees go through the kernel's delayed file release: a few us */
        for (int spin = 0; spin < 50 && unix_sockets() > unix_baseline; spin++) usleep(200);
    }
}


static void run_one(const char *input) {
    char out_path[256];
    snprintf(out_path, sizeof out_path, "%s/out", iodir);
    /* a piped test's FIFOs never block the runner: the host holds them open while the two
     * sides start; one opened after the other side has ended reads EOF (stdin) or gets
     * EPIPE (stdout), as it would on a pipe whose other end has closed */
    int piped_in = piped && strcmp(input, "-") != 0;
    int in_fd = open(strcmp(input, "-") == 0 ? "/dev/null" : input, O_RDONLY | O_CLOEXEC | (piped_in ? O_NONBLOCK : 0));
    if (piped_in && in_fd >= 0) fcntl(in_fd, F_SETFL, 0);
    int out_file = open(out_path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    int out_p[2], err_p[2];
    if (in_fd < 0 || out_file < 0) die("open test files");
    if (pipe2(out_p, O_CLOEXEC) != 0 || pipe2(err_p, O_CLOEXEC) != 0) die("pipe");
    int prog_out = out_p[1];
    if (piped_in) {
        char piped_path[300];
        snprintf(piped_path, sizeof piped_path, "%s.out", input);
        prog_out = open(piped_path, O_WRONLY | O_CLOEXEC | O_NONBLOCK);
        if (prog_out < 0 && errno == ENXIO) {
            /* no reader left: a pipe whose read end is closed */
            int dead[2];
            if (pipe2(dead, O_CLOEXEC) != 0) die("pipe");
            close(dead[0]);
            prog_out = dead[1];
        } else if (prog_out < 0) {
            die("open the piped output");
        } else {
            fcntl(prog_out, F_SETFL, 0);
        }
    }
    static struct sink out, err;
    out.fd = out_p[0];
    out.total = 0;
    out.file = out_file;
    err.fd = err_p[0];
    err.total = 0;
    err.file = -1;
    fcntl(out.fd, F_SETFL, O_NONBLOCK);
    fcntl(err.fd, F_SETFL, O_NONBLOCK);
    long long oom0 = cg_oom_kills();
    /* v1 max_usage_in_bytes and v2 memory.peak alike restart from the current usage */
    cg_write(cg[CG_MEM_MAX], "0");
    long long mem0 = cg_read(cg[CG_MEM_USAGE]);
    long long file0 = cg_file_cache();
    if (!cg_v2) cg_write(cg[CG_CPU_USAGE], "0");
    long long cpu0 = cg_v2 ? cg_cpu() : 0;
    int rep[2];
    if (pipe2(rep, O_CLOEXEC) != 0) die("pipe");
    if (unix_baseline < 0) unix_baseline = unix_sockets();
    long long t0 = now_us();
    sample_reset(t0);
    long long sample_cpu0 = cg[CG_CPU_USAGE] >= 0 ? cpu0 : -1;
    long long idle_checked = t0, progress_at = t0, progress_cpu = 0, progress_withheld = 0;
    /* the backstop's window: the last 400 ms (less for a backstop under 800 ms) */
    long long window = wall_kill_us / 2 < 400000 ? wall_kill_us / 2 : 400000;
    long long ref_t = -1, ref_used = 0, ref_withheld = 0;
    pid_t init;
    if (flat_mode) {
        init = fork();
        if (init == 0) {
            die_quick = 1; /* the runner's stdio buffers are copied here: never flush them */
            close(rep[0]);
            exec_program(in_fd, prog_out, err_p[1]);
        }
    } else if (zygote_mode) {
        init = zygote_test(in_fd, prog_out, err_p[1], rep[1]);
    } else if (launcher >= 0) {
        int fds[4] = {in_fd, prog_out, err_p[1], rep[1]};
        send_fds(launcher, "T", fds, 4);
        struct lmsg m = lrecv();
        init = m.pid;
        errno = m.cg_err;
    } else {
        /* no network namespace per test (5 ms each on a loaded machine): the batch's
         * is empty, programs get no socket but AF_UNIX (the filter), and an abstract
         * unix socket dies with the last process holding it, i.e. with the test */
        init = (pid_t)syscall(SYS_clone, CLONE_NEWPID | CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWUTS | SIGCHLD, 0, 0, 0, 0);
        if (init == 0) {
            close(rep[0]);
            test_init(in_fd, prog_out, err_p[1], rep[1]);
        }
    }
    if (init < 0) die("clone");
    close(rep[1]);
    close(in_fd);
    close(out_p[1]);
    if (prog_out != out_p[1]) close(prog_out);
    close(err_p[1]);
    struct report r = {-1, 0, -1, 0};
    int killed = 0, got = 0;
    /* in flat mode the write end closes at execve (CLOEXEC) and EOF tells
     * nothing, so the program's exit is watched through a pidfd instead */
    int watch = flat_mode ? (int)syscall(SYS_pidfd_open, init, 0) : rep[0];
    if (watch < 0) die("pidfd_open");
    long long t1;
    for (;;) {
        struct pollfd p[3] = {{watch, POLLIN, 0}, {out.fd, POLLIN, 0}, {err.fd, POLLIN, 0}};
        int pr = poll(p, 3, 10);
        t1 = now_us();
        if (pr > 0 && (p[1].revents || p[2].revents)) {
            drain(&out);
            drain(&err);
        }
        if (pr > 0 && p[0].revents) {
            if (!flat_mode) {
                ssize_t n = read(rep[0], &r, sizeof r);
                got = n == (ssize_t)sizeof r;
            }
            break;
        }
        if (pr < 0 && errno != EINTR) die("poll");
        if (!killed && out.total >= fsize_bytes) killed = 3;
        if (!killed && cpu0 >= 0 && cg[CG_CPU_USAGE] >= 0 && cg_cpu() - cpu0 > cpu_kill_us) killed = 1;
        /* the starvation figures (see sample_test), from the first SAMPLE_US of a test on: a
         * test of a few milliseconds costs nothing */
        if (!killed && t1 - sampled_at_us >= SAMPLE_US) sample_test(sample_cpu0, t1);
        if (!killed && idle_kill_us > 0 && t1 - idle_checked >= 200000) {
            /* -e: no CPU progress for idle_kill_us while the test was not withheld from a CPU
             * and none of its tasks waited in D (a compile stalled on a busy disk, its output's
             * writeback throttled, is the machine's delay: the wall-clock backstop still ends it) */
            idle_checked = t1;
            sample_test(sample_cpu0, t1);
            long long cpu = sampled_cpu_us;
            if (cpu - progress_cpu >= 20000 || sched_unknown || disk_waiting) {
                progress_cpu = cpu;
                progress_at = t1;
                progress_withheld = withheld_us;
            } else if (t1 - progress_at > idle_kill_us &&
                       !starved_over(t1 - progress_at, cpu - progress_cpu, withheld_us - progress_withheld)) {
                killed = 2;
            }
        }
        if (!killed && ref_t < 0 && t1 - t0 >= wall_kill_us - window) {
            /* the start of the window the backstop looks at */
            ref_t = t1;
            sample_test(sample_cpu0, t1);
            ref_used = sampled_cpu_us;
            ref_withheld = withheld_us;
        }
        if (!killed && t1 - t0 > wall_kill_us && t1 - ref_t >= window) {
            /* the wall-clock backstop, over the last window (a program busy at its start,
             * a JVM's, and idle since is idle now): a test that was neither on a CPU nor
             * withheld from one most of that time is idle, whatever its tasks' states
             * (sleeping, blocked, stopped, a zombie's parent): killed at once, TLE.  So is a
             * test that lowered its own weight (its autogroup's nice).  A busy one may go on
             * (the CPU limit still stops it) until -W; there, if it was withheld at least
             * half of the time it did not run, the machine held it back and the verdict is
             * the machine's fault (4), never the program's; otherwise it is TLE */
            sample_test(sample_cpu0, t1);
            long long span = t1 - ref_t, d_used = sampled_cpu_us - ref_used, d_withheld = withheld_us - ref_withheld;
            if (d_used < 0) d_used = 0;
            /* without a cgroup's CPU figure, the live tasks' own CPU time still
             * enforces the CPU limit (a fork bomb is busy, not starved) */
            if (sample_cpu0 < 0 && live_cpu_us > cpu_kill_us) killed = 1;
            else if (sched_unknown || weight_lowered || (d_used + d_withheld) * 2 < span) killed = 2;
            else if (t1 - t0 > (starved_kill_us > wall_kill_us ? starved_kill_us : wall_kill_us))
                killed = starved_over(span, d_used, d_withheld) ? 4 : 2;
            ref_t = t1;
            ref_used = sampled_cpu_us;
            ref_withheld = withheld_us;
        }
        if (killed) {
            /* the test may have ended since the poll above (its init then sleeps in the
             * PID namespace's teardown, which must not pass for idleness): take its report */
            struct pollfd again = {watch, POLLIN, 0};
            if (poll(&again, 1, 0) > 0) {
                killed = 0;
                continue;
            }
            cg_write(cg[CG_KILL], "1");
            kill(init, SIGKILL);
            break;
        }
    }
    /* leftovers of the test die now; the PID namespace would take them with its init anyway */
    if (!flat_mode) cg_write(cg[CG_KILL], "1");
    if (flat_mode) close(watch);
    int st, reaped = 0;
    struct rusage ru;
    memset(&ru, 0, sizeof ru);
    if (zygote_mode) {
        /* the init only holds the namespaces: its end takes the program and whatever it left */
        kill(init, SIGKILL);
        if (!got) got = zygote_report(rep[0], &r);
    } else if (flat_mode || !got) {
        /* flat: the init is the program; no report: the init's own rusage stands in */
        if (launcher >= 0) launcher_reaped(&st, &ru);
        else while (wait4(init, &st, 0, &ru) < 0 && errno == EINTR) {}
        reaped = 1;
    }
    close(rep[0]);
    if (flat_mode) {
        r.status = st;
        r.cpu_us = (long long)ru.ru_utime.tv_sec * 1000000 + ru.ru_utime.tv_usec +
                   (long long)ru.ru_stime.tv_sec * 1000000 + ru.ru_stime.tv_usec;
        r.maxrss_kb = ru.ru_maxrss;
        got = 1;
        flat_cleanup(init);
    }
    /* read to EOF: the program has ended, the cgroup's kill (or, without one, the PID
     * namespace's end, which follows the init's report) takes what it left, and
     * flat_cleanup killed and reaped the rest */
    while (out.fd >= 0 || err.fd >= 0) {
        struct pollfd p[2] = {{out.fd, POLLIN, 0}, {err.fd, POLLIN, 0}};
        if (poll(p, 2, 1000) <= 0) break;
        drain(&out);
        drain(&err);
    }
    if (out.fd >= 0) close(out.fd);
    if (err.fd >= 0) close(err.fd);
    if (!got) {
        r.status = 9; /* as if SIGKILLed: the init died before reporting */
        r.cpu_us = -1;
        r.maxrss_kb = ru.ru_maxrss;
    }
    long long cpu1 = cg_cpu();
    long long cg_cpu_us = (cpu0 < 0 || cpu1 < 0) ? -1 : cpu1 - cpu0;
    long long mem1 = cg_read(cg[CG_MEM_MAX]);
    long long file1 = cg_file_cache();
    if (mem1 >= 0 && mem0 >= 0 && file0 >= 0 && file1 > file0) {
        /* the peak less the shared files' cache the test brought in (see cg_file_cache);
         * never below the usage it started from */
        mem1 = mem1 - (file1 - file0) > mem0 ? mem1 - (file1 - file0) : mem0;
    }
    long long oom1 = cg_oom_kills();
    if (got && r.cg_err != 0) {
        /* the counters describe an empty cgroup: report nothing rather than zeros,
         * and stop using cgroups for the rest of the batch */
        fprintf(stderr, "hts-runner: cannot join the test cgroup: %s\n", strerror(r.cg_err));
        cg_cpu_us = mem1 = oom1 = -1;
        for (int i = 0; i < CG_N; i++) cg[i] = -1;
    }
    /* A test that left processes behind (children of the program, a fork bomb's thousands)
     * ends whole before its result goes out: the init's end takes them all, and whoever reads
     * the result (a lane, the API's answer) finds none of them on the machine.  A test that
     * left none answers first; its init's end (namespaces torn down, RCU grace periods
     * included) then overlaps the caller's reading, and is over before the next test starts. */
    if (!reaped && !flat_mode && test_leftovers(init)) {
        cg_write(cg[CG_KILL], "1");
        kill(init, SIGKILL);
        if (launcher >= 0) launcher_reaped(&st, &ru);
        else while (wait4(init, &st, 0, &ru) < 0 && errno == EINTR) {}
        reaped = 1;
    }
    long long out_len = out.total, out_trunc = 0, err_len = err.total;
    if (out_len >= fsize_bytes) {
        out_len = fsize_bytes - 1;
        out_trunc = 1;
    }
    if (err_len > ERR_TAIL) err_len = ERR_TAIL;
    printf("S %d %lld %lld %lld %lld %lld %lld %d %lld %lld %lld\n", r.status, r.cpu_us, t1 - t0, r.maxrss_kb,
           cg_cpu_us, (mem1 < 0 || mem0 < 0) ? -1 : (mem1 - mem0) / 1024,
           (oom0 < 0 || oom1 < 0) ? -1 : oom1 - oom0, killed, out_len, out_trunc, err_len);
    send_file(out_file, out_len, 0);
    for (long long i = err.total - err_len; i < err.total; i++) fputc(err.tail[i % ERR_TAIL], stdout);
    fflush(stdout);
    /* the output file is the runner's memory (tmpfs): give it back before the next test */
    if (ftruncate(out_file, 0) < 0) { /* best effort */ }
    close(out_file);
    if (!reaped) {
        if (launcher >= 0) launcher_reaped(&st, &ru);
        else while (wait4(init, &st, 0, &ru) < 0 && errno == EINTR) {}
    }
    /* every process of the test is gone: what it left is only what the kernel keeps
     * for it (unix sockets in flight, and the files they carry) */
    collect_unix_garbage();
}

#ifndef HTS_LIBRARY
int main(int argc, char **argv) {
    int opt;
    for (int i = 0; i < CG_N; i++) cg[i] = -1;
    while ((opt = getopt(argc, argv, "+t:w:W:e:m:f:p:n:s:z:d:o:i:g:G:NZCL:I:R:")) != -1) {
        if (option(opt, optarg) != 0) {
            fprintf(stderr, "hts-runner: bad option\n");
            return 2;
        }
    }
    if (optind >= argc) {
        fprintf(stderr, "hts-runner: no program\n");
        return 2;
    }
    prog_argv = argv + optind;
    /* the batch's CPU cgroup (v1, cpu a hierarchy of its own): joined before anything is
     * forked, so that the launcher, the zygote and every test are born in it, at the
     * harness's weight; a batch never runs outside it */
    if (cg[CG_CPU_PROCS] >= 0 && !cg_write(cg[CG_CPU_PROCS], "0")) die("join the batch's CPU cgroup");
    if (cg[CG_CPU_PROCS] >= 0) close(cg[CG_CPU_PROCS]);
    cg[CG_CPU_PROCS] = -1;
    /* raising one's own nice value is always allowed; the launcher and the zygote inherit it */
    if (!configure_later || idle_nice <= 0 || setpriority(PRIO_PROCESS, 0, idle_nice) != 0) idle_nice = 0;
    build_filter();
    signal(SIGPIPE, SIG_IGN);
    /* a program running under the same uid must not be able to ptrace us */
    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
    if (!flat_mode) make_empty_dir();
    /* every test's program is a clone of this process or of its launcher, and neither execs
     * anything (a zygote is an exec of python3 that needs the namespace's capabilities) */
    if (!flat_mode && !zygote_mode) {
        drop_bounding_set();
        bounding_set_empty = 1;
    }
    if (!flat_mode && !zygote_mode && !cg_v2 && cg[CG_PROCS_1] >= 0) start_launcher();
    char line[4096];
    /* a spare's zygote starts now (its interpreter's start off the batch's path), if it can
     * join the test cgroup: without one the zygote needs the address-space limit at exec */
    if (configure_later && zygote_mode && cg[CG_PROCS_1] >= 0) start_zygote(1);
    if (configure_later) {
        fputs("ready\n", stdout);
        fflush(stdout);
        /* the configuration's strings (-d) must outlive the line buffer */
        static char config[4096];
        if (!fgets(config, sizeof config, stdin) || config[0] == 'Q') return 0;
        /* a batch never runs at a spare's priority: its tests are forked by these three */
        if (idle_nice > 0 && !(at_normal_priority(0) && (launcher_pid < 0 || at_normal_priority(launcher_pid)) &&
                               (zpid < 0 || at_normal_priority(zpid)))) {
            fprintf(stderr, "hts-runner: the spare was not brought back to normal priority\n");
            return 2;
        }
        /* the launcher, forked before, takes the same line (configure cuts it up) */
        if (launcher >= 0 && send(launcher, config, strlen(config), MSG_NOSIGNAL) < 0) die("the launcher is gone");
        if (config[0] != 'C' || configure(config) != 0) {
            fprintf(stderr, "hts-runner: bad configuration\n");
            return 2;
        }
    }
    if (zygote_mode && !flat_mode) configure_zygote();
    while (fgets(line, sizeof line, stdin)) {
        size_t n = strlen(line);
        if (n && line[n - 1] == '\n') line[--n] = 0;
        if (line[0] == 'Q') break;
        if ((line[0] != 'R' && line[0] != 'P') || n < 3) {
            fprintf(stderr, "hts-runner: bad command\n");
            return 2;
        }
        piped = line[0] == 'P';
        run_one(line + 2);
    }
    return 0;
}
#endif
