/*
 * hts-runner's side of the Python zygote (-Z; sandbox/zygote.py does the rest).
 *
 * With -Z the program argv is `python3 -I <zygote.py> -- <main.py> [args]`.  The runner
 * starts that interpreter once per batch, after the seccomp filter is built, with:
 *   fd 3  a SEQPACKET socket to the runner;
 *   fd 4  a memfd holding the filter's BPF (libseccomp's output, as installed by
 *         exec_program), which the program process installs before the program runs;
 *   fd 5+ the test cgroup's cgroup.procs descriptors, for the test init to join;
 * its stdin and stdout on /dev/null and its stderr shared with the runner, the program's
 * environment and RLIMIT_STACK (so the address-space layout matches an exec'd program).
 * Per test the runner clones the test's init as usual (new PID, mount, IPC and UTS
 * namespaces, the test's mounts) but that init only holds the namespaces; the runner sends
 * the zygote "T" with the test's stdin, stdout, stderr and report descriptors and a pidfd
 * of the init.  The zygote forks the program into the init's PID namespace (setns for
 * its children), the program enters the init's other namespaces and (cgroup v2; on v1 the
 * zygote joined it once and the program is born in it) the test cgroup, and
 * the zygote writes the program's report (status and rusage, as test_init would) once it
 * has reaped it.  The runner then kills the init, which takes whatever the program left.
 */

static int zygote_mode = 0, zsock = -1;

static void send_fds(int sock, const char *msg, const int *fds, int n) {
    char control[CMSG_SPACE(sizeof(int) * 8)];
    struct iovec iov = {(void *)msg, strlen(msg)};
    struct msghdr mh = {0};
    memset(control, 0, sizeof control);
    mh.msg_iov = &iov;
    mh.msg_iovlen = 1;
    mh.msg_control = control;
    mh.msg_controllen = CMSG_SPACE(sizeof(int) * n);
    struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN(sizeof(int) * n);
    memcpy(CMSG_DATA(cm), fds, sizeof(int) * n);
    while (sendmsg(sock, &mh, MSG_NOSIGNAL) < 0) {
        if (errno != EINTR) die("the python zygote is gone (send)");
    }
}

/* A spare sandbox (-C) starts its zygote before its batch's limits are known, so that the
 * interpreter's start is not on the batch's path: with RLIMIT_STACK at LATE_STACK (it sets
 * the room left for the stack below the libraries at exec; each program gets the batch's own
 * limit), and every option that depends on the batch sent later (configure_zygote).  A batch
 * that wants a larger stack, or an address-space limit (no memory cgroup), gets a zygote
 * started for it, as without a spare. */
#define LATE_STACK (1LL << 30)
static int zygote_late = 0;

/* How the zygote joins the cgroup.  cgroup v1: once, and its programs are born in it (a
 * move per test takes the kernel's global cgroup lock, which stalls every fork and exit of
 * the machine); v2's cgroup.kill after each test would take the zygote with it.  Known at
 * the sandbox's start, so a late zygote gets it then and joins at once: the move's wait for
 * that lock (an RCU grace period after a quiet spell, 5-15 ms) is off the batch's path, as
 * the launcher's is. */
static void zygote_join_option(char opts[11][96]) {
    snprintf(opts[10], 96, "%s", cg_v2 ? "each" : "once");
}

/* The zygote's options that depend on the batch: workdir, the limits (and, again, how it
 * joins the cgroup). */
static void zygote_batch_options(char opts[11][96]) {
    snprintf(opts[3], 96, "%s", workdir);
    snprintf(opts[4], 96, "%lld", cpu_kill_us);
    snprintf(opts[5], 96, "%lld", as_bytes);
    snprintf(opts[6], 96, "%lld", fsize_bytes);
    snprintf(opts[7], 96, "%ld", nproc);
    snprintf(opts[8], 96, "%ld", nofile);
    snprintf(opts[9], 96, "%lld", stack_bytes);
    zygote_join_option(opts);
}

/* What the zygote's compile of the program said (its "ready" once it has the program ends
 * with it, zygote.py's COMPILED, RAISED or UNSURE): '+', '-', '?', or 0 before it said. */
static char zygote_compiled = 0;

/* Whether the zygote said it is ready. */
static int zygote_ready(void) {
    struct pollfd p = {zsock, POLLIN, 0};
    char ready[8] = "";
    struct iovec iov = {ready, sizeof ready - 1};
    struct msghdr mh = {0};
    mh.msg_iov = &iov;
    mh.msg_iovlen = 1;
    int n;
    while ((n = poll(&p, 1, 60000)) < 0 && errno == EINTR) {}
    if (n != 1) return 0;
    ssize_t got = recvmsg(zsock, &mh, 0);
    if ((got != 5 && got != 6) || strncmp(ready, "ready", 5) != 0) return 0;
    zygote_compiled = ready[5];
    return 1;
}

/* The host's first line after the batch's configuration, before any test's answer: whether
 * the zygote compiled the program as `python3 -I main.py` does ("Z compiled"), which answers
 * Python's syntax check (languages.compile_step) without a sandbox of its own; "Z raised"
 * (compiling raised: the check says what) or "Z unknown" (no zygote serves the batch, or its
 * compile needed more than the check's answer can be taken from it) make the host run the
 * check.  Written by the runner, from what the zygote said before any program ran: no
 * program can write it. */
static void zygote_announce(void) {
    const char *said = !zygote_mode ? "unknown"
                       : zygote_compiled == '+' ? "compiled"
                       : zygote_compiled == '-' ? "raised" : "unknown";
    printf("Z %s\n", said);
    fflush(stdout);
}

/* A spare's zygote, before any program: not starting is the machine's failure. */
static void zygote_wait_ready(void) {
    if (!zygote_ready()) {
        fprintf(stderr, "hts-runner: the python zygote did not start\n");
        exit(2);
    }
}

/* Once it has the program, the zygote reads and compiles it before it says ready.  Every
 * exception of that is the program's (each test raises it, zygote.py), but a program's text
 * can still end the interpreter there: a program whose compilation needs more memory than
 * the batch's limit is killed by the test cgroup's OOM killer, a compiler crash is a signal.
 * A fresh `python3 -I main.py` gets its own verdict for that on every test, so the batch
 * runs each test so, the exec path, never a sandbox error for the program's text.  (A
 * machine failure that ends the zygote there ends the exec'd tests too.) */
static void zygote_or_exec(void) {
    if (zygote_ready()) {
        zygote_announce();
        return;
    }
    fprintf(stderr, "hts-runner: the python zygote did not start; the batch's tests run python3 -I main.py\n");
    kill(zpid, SIGKILL);
    while (waitpid(zpid, NULL, 0) < 0 && errno == EINTR) {}
    close(zsock);
    zsock = -1;
    zpid = -1;
    zygote_mode = 0;
    /* prog_argv: python3 -I zygote.py -- main.py [args] -> python3 -I main.py [args] */
    int i = 2;
    do prog_argv[i] = prog_argv[i + 2];
    while (prog_argv[i++]);
    zygote_announce();
}

static void start_zygote(int late) {
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) die("socketpair");
    int mem = (int)syscall(SYS_memfd_create, "hts-filter", MFD_CLOEXEC);
    ssize_t size = (ssize_t)filter.len * (ssize_t)sizeof(struct sock_filter);
    if (mem < 0 || write(mem, filter.filter, size) != size || lseek(mem, 0, SEEK_SET) != 0) die("filter memfd");
    /* prog_argv: python3 -I zygote.py -- main.py [args]; the options go before "--" */
    int argc = 0;
    while (prog_argv[argc]) argc++;
    if (argc < 5 || strcmp(prog_argv[3], "--") != 0) {
        fprintf(stderr, "hts-runner: -Z wants: python3 -I zygote.py -- main.py [args]\n");
        exit(2);
    }
    char opts[11][96], cgs[64] = "";
    int procs[3], nprocs = 0;
    for (int i = CG_PROCS_1; i <= CG_PROCS_3; i++) if (cg[i] >= 0) procs[nprocs++] = cg[i];
    for (int i = 0; i < nprocs; i++) snprintf(cgs + strlen(cgs), sizeof cgs - strlen(cgs), "%s%d", i ? "," : "", 5 + i);
    snprintf(opts[0], 96, "3");
    snprintf(opts[1], 96, "4");
    snprintf(opts[2], 96, "%s", cgs);
    if (late) {
        for (int i = 3; i < 10; i++) snprintf(opts[i], 96, "-"); /* configure_zygote sends them */
        zygote_join_option(opts);
    } else {
        zygote_batch_options(opts);
    }
    long long stack = late ? LATE_STACK : stack_bytes;
    char **argv = calloc(argc + 12, sizeof(char *));
    if (!argv) die("calloc");
    int k = 0;
    for (int i = 0; i < 3; i++) argv[k++] = prog_argv[i];
    for (int i = 0; i < 11; i++) argv[k++] = opts[i];
    for (int i = 3; i < argc; i++) argv[k++] = prog_argv[i];
    pid_t pid = fork();
    if (pid < 0) die("fork");
    if (pid == 0) {
        /* lift what the zygote keeps above every number it will use, then lay it out */
        int s = fcntl(sv[1], F_DUPFD, 100), m = fcntl(mem, F_DUPFD, 100), high[3];
        for (int i = 0; i < nprocs; i++) high[i] = fcntl(procs[i], F_DUPFD, 100);
        int null = open("/dev/null", O_RDWR);
        if (s < 0 || m < 0 || null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0) die("zygote fds");
        syscall(SYS_close_range, 3, 99, 0);
        if (dup2(s, 3) < 0 || dup2(m, 4) < 0) die("zygote fds");
        for (int i = 0; i < nprocs; i++) if (high[i] < 0 || dup2(high[i], 5 + i) < 0) die("zygote fds");
        syscall(SYS_close_range, 5 + nprocs, ~0U, 0);
        if (stack > 0) set_limit(RLIMIT_STACK, stack, stack);
        signal(SIGPIPE, SIG_DFL);
        char *envp[] = {"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/tmp", "LANG=C.UTF-8", "TMPDIR=/tmp", NULL};
        execve(argv[0], argv, envp);
        fprintf(stderr, "hts-runner: cannot start the python zygote %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    free(argv);
    zpid = pid;
    close(sv[1]);
    close(mem);
    zsock = sv[0];
    zygote_late = late;
    if (late) zygote_wait_ready();
    else zygote_or_exec();
}

/* After the "C" line: the batch's options to a zygote started late, which then reads and
 * compiles the program and says ready; or a zygote started now where a late one cannot
 * serve the batch (see LATE_STACK). */
static void configure_zygote(void) {
    if (!zygote_late) {
        start_zygote(0);
        return;
    }
    if (stack_bytes > LATE_STACK || as_bytes > 0) {
        close(zsock); /* it exits when its socket closes */
        while (waitpid(zpid, NULL, 0) < 0 && errno == EINTR) {}
        start_zygote(0);
        return;
    }
    char opts[11][96], msg[1024];
    zygote_batch_options(opts);
    int n = snprintf(msg, sizeof msg, "C");
    for (int i = 3; i < 11 && n < (int)sizeof msg; i++) n += snprintf(msg + n, sizeof msg - n, " %s", opts[i]);
    if (n >= (int)sizeof msg) die("zygote options");
    while (send(zsock, msg, n, MSG_NOSIGNAL) < 0) {
        if (errno != EINTR) die("the python zygote is gone (configure)");
    }
    zygote_late = 0;
    zygote_or_exec();
}

/* The test's init in zygote mode: pid 1 of the test's new PID, mount, IPC and UTS
 * namespaces, with the test's mounts, holding them (and reaping orphans) until the runner
 * kills it after the test.  It is not the program's parent: the zygote forks the program
 * into these namespaces. */
static void zygote_holder(int ready_fd) {
    die_quick = 1; /* the runner's stdio buffers are copied here: never flush them */
    test_mounts();
    signal(SIGCHLD, SIG_IGN); /* orphans reparented to us are reaped by the kernel */
    if (write(ready_fd, "1", 1) != 1) _exit(3);
    syscall(SYS_close_range, 0, ~0U, 0);
    for (;;) pause();
}

/* Start the test: its init here, then the program forked by the zygote into the init's
 * namespaces.  The zygote writes the program's report to rep_fd once it has reaped it. */
static pid_t zygote_test(int in_fd, int out_fd, int err_fd, int rep_fd) {
    int ready[2];
    if (pipe2(ready, O_CLOEXEC) != 0) die("pipe");
    pid_t init = (pid_t)syscall(SYS_clone, CLONE_NEWPID | CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWUTS | SIGCHLD, 0, 0, 0, 0);
    if (init < 0) die("clone");
    if (init == 0) {
        close(ready[0]);
        zygote_holder(ready[1]);
    }
    close(ready[1]);
    char c;
    ssize_t n;
    while ((n = read(ready[0], &c, 1)) < 0 && errno == EINTR) {}
    close(ready[0]);
    if (n != 1) {
        errno = EPROTO;
        die("the test init did not start");
    }
    int pidfd = (int)syscall(SYS_pidfd_open, init, 0);
    if (pidfd < 0) die("pidfd_open");
    int fds[5] = {in_fd, out_fd, err_fd, rep_fd, pidfd};
    send_fds(zsock, "T", fds, 5);
    close(pidfd);
    return init;
}

/* The report of a test that was stopped before it came (the program is dead by now: its
 * PID namespace is gone), so that the next test starts with the zygote idle. */
static int zygote_report(int rep_fd, struct report *r) {
    ssize_t n;
    while ((n = read(rep_fd, r, sizeof *r)) < 0 && errno == EINTR) {}
    if (n == (ssize_t)sizeof *r) return 1;
    /* the zygote writes every report it owes unless it died: an infrastructure failure (the
     * batch ends in SE), never a program killed by a signal (a waitpid could race its exit) */
    errno = EPIPE;
    die("the python zygote died");
    return 0;
}

#ifdef HTS_LIBRARY
/* ---- hts-zygote.so: this file compiled with -DHTS_LIBRARY -shared, loaded by zygote.py,
 * so that a program process is set up by the very code of exec_program (one call instead
 * of a hundred from Python, each touching pages of the forked interpreter). */

/* The test cgroup's cgroup.procs descriptors the zygote was given. */
static void zygote_cgroup(const int *procs, int nprocs_fds) {
    for (int i = 0; i < CG_N; i++) cg[i] = -1;
    for (int i = 0; i < nprocs_fds && i < 3; i++) cg[CG_PROCS_1 + i] = procs[i];
}

/* Once, in the zygote: the batch's limits, filter and test cgroup. */
int hts_zygote_configure(long long cpu_us, long long as, long long fsize, long nprocs, long nfiles, long long stack,
                         const char *dir, const void *bpf, int bpf_len, const int *procs, int nprocs_fds) {
    cpu_kill_us = cpu_us;
    as_bytes = as;
    fsize_bytes = fsize;
    nproc = nprocs;
    nofile = nfiles;
    stack_bytes = stack;
    workdir = strdup(dir);
    filter.len = (unsigned short)(bpf_len / sizeof(struct sock_filter));
    filter.filter = malloc(bpf_len);
    if (!workdir || !filter.filter) return -1;
    memcpy(filter.filter, bpf, bpf_len);
    zygote_cgroup(procs, nprocs_fds);
    return 0;
}

/* Once, in the zygote (cgroup v1, "once"): into the test cgroup, so that each program is
 * born in it; 0 or the errno of the failure, which every test then reports. */
int hts_zygote_join(void) { return cg_join(); }

/* The same, for a zygote started late (a spare's), before hts_zygote_configure: the cgroup
 * is the spare's own from its start, only its limits change when a batch takes it. */
int hts_zygote_join_early(const int *procs, int nprocs_fds) {
    zygote_cgroup(procs, nprocs_fds);
    return cg_join();
}

/* In a program process forked into the test init's PID namespace: into the init's other
 * namespaces and (joined_fd >= 0: the zygote is not in it) the test cgroup, whose outcome
 * goes to joined_fd, then program_setup.  Failures end the process (exit 2), as in
 * exec_program. */
void hts_zygote_program(int init_pidfd, int joined_fd, int in_fd, int out_fd, int err_fd) {
    if (setns(init_pidfd, CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWUTS) != 0) die("setns");
    int cg_err = joined_fd >= 0 ? cg_join() : 0;
    if (joined_fd >= 0 && write(joined_fd, &cg_err, sizeof cg_err) != (ssize_t)sizeof cg_err) die("report the cgroup");
    /* dumpable again, as after execve (the zygote is not, so that no program reaches it) */
    if (prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) != 0) die("dumpable");
    program_setup(in_fd, out_fd, err_fd);
}
#endif
