/*
 * hts-runner: the small process that lives inside one bubblewrap sandbox and
 * runs every test of a batch.  It is written in C because the per-test cost
 * must stay around a millisecond: one clone + one fork + one execve per test.
 *
 * Each test runs in fresh PID, mount and IPC namespaces.  The first process of
 * the test (the "init", pid 1 of that namespace) mounts a fresh /tmp, /dev/shm
 * and /proc, hides the runner's private directories, joins the test cgroup and
 * forks the program.  When the program exits the init reports its rusage and
 * exits too; the kernel then kills every other process of that PID namespace,
 * which is how background children and setsid escapes are cleaned up.
 *
 * Protocol (stdin/stdout, one test at a time):
 *   in:  "R <input-path or ->\n"
 *   out: "S <status> <cpu_us> <wall_us> <maxrss_kb> <cg_cpu_us> <cg_mem_kb>
 *         <oom> <killed: 1 cpu, 2 wall, 3 output> <out_len> <out_trunc> <err_len>\n" + stdout + stderr tail
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/securebits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define ERR_TAIL 4096

enum { CG_MEM_PROCS, CG_PIDS_PROCS, CG_CPU_PROCS, CG_MEM_MAX, CG_MEM_USAGE, CG_MEM_OOM, CG_CPU_USAGE, CG_N };

static long long cpu_kill_us = 10000000, wall_kill_us = 30000000;
static long long as_bytes = 0, fsize_bytes = 64 << 20, stack_bytes = 0, tmpfs_bytes = 256 << 20;
static long nproc = 64, nofile = 256;
static int cg[CG_N];
static const char *workdir = "/tmp", *iodir = "/.hts-io", *indir = "/.hts-in";
static char **prog_argv;
/* -N: no namespaces of our own (inside a Docker container, where the runner is
 * pid 1 of the container's PID namespace and kills everything else after each
 * test instead) */
static int flat_mode = 0;

struct report { int status; long long cpu_us, maxrss_kb; };

static long long now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static void die(const char *what) {
    fprintf(stderr, "hts-runner: %s: %s\n", what, strerror(errno));
    exit(2);
}

static long long cg_read(int fd) {
    char buf[64];
    if (fd < 0) return -1;
    ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
    if (n <= 0) return -1;
    buf[n] = 0;
    return atoll(buf);
}

/* memory.oom_control holds several "key value" lines; we need oom_kill. */
static long long cg_oom_kills(void) {
    char buf[512];
    if (cg[CG_MEM_OOM] < 0) return -1;
    ssize_t n = pread(cg[CG_MEM_OOM], buf, sizeof buf - 1, 0);
    if (n <= 0) return -1;
    buf[n] = 0;
    char *p = strstr(buf, "oom_kill ");
    return p ? atoll(p + 9) : -1;
}

static void cg_write(int fd, const char *s) {
    if (fd >= 0 && pwrite(fd, s, strlen(s), 0) < 0) { /* accounting only; a failure is not fatal */ }
}

static void set_limit(int res, rlim_t soft, rlim_t hard) {
    struct rlimit rl = {soft, hard};
    if (setrlimit(res, &rl) != 0) die("setrlimit");
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
    for (int c = 0; c <= 63; c++) {
        if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0) != 0 && errno != EINVAL) die("capbset");
    }
    prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
    struct __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct data[2];
    memset(data, 0, sizeof data);
    if (syscall(SYS_capset, &hdr, data) != 0) die("capset");
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) die("no_new_privs");
}

static void exec_program(int in_fd, int out_fd, int err_fd) {
    if (dup2(in_fd, 0) < 0 || dup2(out_fd, 1) < 0 || dup2(err_fd, 2) < 0) die("dup2");
    syscall(SYS_close_range, 3, ~0U, 0);
    if (chdir(workdir) != 0) die("chdir");
    if (flat_mode) setsid();
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
    drop_capabilities();
    signal(SIGPIPE, SIG_DFL);
    char *envp[] = {"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/tmp", "LANG=C.UTF-8", "TMPDIR=/tmp", NULL};
    execve(prog_argv[0], prog_argv, envp);
    fprintf(stderr, "hts-runner: cannot execute %s: %s\n", prog_argv[0], strerror(errno));
    _exit(127);
}

/* pid 1 of the test's PID namespace. */
static void test_init(int in_fd, int out_fd, int err_fd, int rep_fd) {
    char opts[64];
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) die("mount private");
    snprintf(opts, sizeof opts, "size=%lld,mode=1777", tmpfs_bytes);
    if (mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, opts) != 0) die("mount /tmp");
    if (mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, opts) != 0) die("mount /dev/shm");
    if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) != 0) die("mount /proc");
    umount2(iodir, MNT_DETACH);
    umount2(indir, MNT_DETACH);
    /* join the test cgroup before forking so every descendant is accounted */
    cg_write(cg[CG_MEM_PROCS], "0");
    cg_write(cg[CG_PIDS_PROCS], "0");
    cg_write(cg[CG_CPU_PROCS], "0");
    pid_t child = fork();
    if (child < 0) die("fork");
    if (child == 0) {
        close(rep_fd);
        exec_program(in_fd, out_fd, err_fd);
    }
    close(in_fd);
    close(out_fd);
    close(err_fd);
    for (int i = 0; i < CG_N; i++) if (cg[i] >= 0) close(cg[i]);
    struct report r = {-1, 0, 0};
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

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
    (void)sb;
    (void)flag;
    if (ftw->level > 0) remove(path);
    return 0;
}

/* pid 1 of the container: kill every other process (background children,
 * setsid escapes), reap them, and wipe the scratch directories. */
static void flat_cleanup(pid_t session) {
    /* outside a container (tests of the runner itself) only the session dies */
    kill(getpid() == 1 ? -1 : -session, SIGKILL);
    while (waitpid(-1, NULL, 0) > 0 || errno == EINTR) {}
    nftw("/tmp", remove_entry, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
    nftw("/dev/shm", remove_entry, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
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

static void run_one(const char *input) {
    char out_path[256], err_path[256];
    snprintf(out_path, sizeof out_path, "%s/out", iodir);
    snprintf(err_path, sizeof err_path, "%s/err", iodir);
    int in_fd = open(strcmp(input, "-") == 0 ? "/dev/null" : input, O_RDONLY | O_CLOEXEC);
    int out_fd = open(out_path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    int err_fd = open(err_path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (in_fd < 0 || out_fd < 0 || err_fd < 0) die("open test files");
    long long oom0 = cg_oom_kills();
    cg_write(cg[CG_MEM_MAX], "0");
    long long mem0 = cg_read(cg[CG_MEM_USAGE]);
    cg_write(cg[CG_CPU_USAGE], "0");
    int rep[2];
    if (pipe2(rep, O_CLOEXEC) != 0) die("pipe");
    long long t0 = now_us();
    pid_t init;
    if (flat_mode) {
        init = fork();
        if (init == 0) {
            close(rep[0]);
            exec_program(in_fd, out_fd, err_fd);
        }
    } else {
        init = (pid_t)syscall(SYS_clone, CLONE_NEWPID | CLONE_NEWNS | CLONE_NEWIPC | SIGCHLD, 0, 0, 0, 0);
        if (init == 0) {
            close(rep[0]);
            test_init(in_fd, out_fd, err_fd, rep[1]);
        }
    }
    if (init < 0) die("clone");
    close(rep[1]);
    close(in_fd);
    struct report r = {-1, -1, 0};
    int killed = 0, got = 0;
    /* in flat mode the write end closes at execve (CLOEXEC) and EOF tells
     * nothing, so the program's exit is watched through a pidfd instead */
    int watch = flat_mode ? (int)syscall(SYS_pidfd_open, init, 0) : rep[0];
    if (watch < 0) die("pidfd_open");
    long long t1;
    for (;;) {
        struct pollfd p = {watch, POLLIN, 0};
        int pr = poll(&p, 1, 10);
        t1 = now_us();
        if (pr > 0) {
            if (!flat_mode) {
                ssize_t n = read(rep[0], &r, sizeof r);
                got = n == (ssize_t)sizeof r;
            }
            break;
        }
        if (pr < 0 && errno != EINTR) die("poll");
        if (!killed && t1 - t0 > wall_kill_us) killed = 2;
        struct stat so;
        /* a program that ignores SIGXFSZ (the JVM does) would otherwise spin on EFBIG */
        if (!killed && fstat(out_fd, &so) == 0 && so.st_size >= fsize_bytes) killed = 3;
        if (!killed && cg[CG_CPU_USAGE] >= 0 && cg_read(cg[CG_CPU_USAGE]) / 1000 > cpu_kill_us) killed = 1;
        if (killed) {
            kill(init, SIGKILL);
            break;
        }
    }
    close(rep[0]);
    if (flat_mode) close(watch);
    int st;
    struct rusage ru;
    while (wait4(init, &st, 0, &ru) < 0 && errno == EINTR) {}
    if (flat_mode) {
        r.status = st;
        r.cpu_us = (long long)ru.ru_utime.tv_sec * 1000000 + ru.ru_utime.tv_usec +
                   (long long)ru.ru_stime.tv_sec * 1000000 + ru.ru_stime.tv_usec;
        r.maxrss_kb = ru.ru_maxrss;
        got = 1;
        flat_cleanup(init);
    }
    if (!got) {
        r.status = 9; /* as if SIGKILLed: the init died before reporting */
        r.cpu_us = -1;
        r.maxrss_kb = ru.ru_maxrss;
    }
    long long cg_cpu = cg_read(cg[CG_CPU_USAGE]);
    long long mem1 = cg_read(cg[CG_MEM_MAX]);
    long long oom1 = cg_oom_kills();
    struct stat so, se;
    fstat(out_fd, &so);
    fstat(err_fd, &se);
    long long out_len = so.st_size, out_trunc = 0, err_len = se.st_size, err_skip = 0;
    if (out_len >= fsize_bytes) {
        out_len = fsize_bytes - 1;
        out_trunc = 1;
    }
    if (err_len > ERR_TAIL) {
        err_skip = err_len - ERR_TAIL;
        err_len = ERR_TAIL;
    }
    printf("S %d %lld %lld %lld %lld %lld %lld %d %lld %lld %lld\n", r.status, r.cpu_us, t1 - t0, r.maxrss_kb,
           cg_cpu < 0 ? -1 : cg_cpu / 1000, (mem1 < 0 || mem0 < 0) ? -1 : (mem1 - mem0) / 1024,
           (oom0 < 0 || oom1 < 0) ? -1 : oom1 - oom0, killed, out_len, out_trunc, err_len);
    send_file(out_fd, out_len, 0);
    send_file(err_fd, err_len, err_skip);
    fflush(stdout);
    close(out_fd);
    close(err_fd);
}

int main(int argc, char **argv) {
    int opt;
    for (int i = 0; i < CG_N; i++) cg[i] = -1;
    while ((opt = getopt(argc, argv, "+t:w:m:f:p:n:s:z:d:o:i:g:NI:R:")) != -1) {
        switch (opt) {
        case 't': cpu_kill_us = atoll(optarg); break;
        case 'w': wall_kill_us = atoll(optarg); break;
        case 'm': as_bytes = atoll(optarg); break;
        case 'f': fsize_bytes = atoll(optarg); break;
        case 'p': nproc = atol(optarg); break;
        case 'n': nofile = atol(optarg); break;
        case 's': stack_bytes = atoll(optarg); break;
        case 'z': tmpfs_bytes = atoll(optarg); break;
        case 'd': workdir = optarg; break;
        case 'o': iodir = optarg; break;
        case 'i': indir = optarg; break;
        case 'N': flat_mode = 1; break;
        case 'I':
            if (!freopen(optarg, "r", stdin)) die("commands file");
            break;
        case 'R':
            if (!freopen(optarg, "w", stdout)) die("results file");
            break;
        case 'g': {
            /* cgroup control files opened by the trusted parent: the sandbox
             * cannot open them itself (no /sys), it only inherits them */
            char *s = optarg;
            for (int i = 0; i < CG_N && s; i++) {
                cg[i] = atoi(s);
                s = strchr(s, ',');
                if (s) s++;
            }
            break;
        }
        default: fprintf(stderr, "hts-runner: bad option\n"); return 2;
        }
    }
    if (optind >= argc) {
        fprintf(stderr, "hts-runner: no program\n");
        return 2;
    }
    prog_argv = argv + optind;
    signal(SIGPIPE, SIG_IGN);
    /* a program running under the same uid must not be able to ptrace us */
    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
    char line[4096];
    while (fgets(line, sizeof line, stdin)) {
        size_t n = strlen(line);
        if (n && line[n - 1] == '\n') line[--n] = 0;
        if (line[0] == 'Q') break;
        if (line[0] != 'R' || n < 3) {
            fprintf(stderr, "hts-runner: bad command\n");
            return 2;
        }
        run_one(line + 2);
    }
    return 0;
}
