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
 * Per test the runner sends "T" with the test's stdin, stdout, stderr and report
 * descriptors and gets back the test init's pid and a pidfd of it: the init reports
 * over the report pipe exactly as test_init does, and the pidfd becomes readable once
 * the init, and so its whole PID namespace, is gone.
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

/* One message with an int payload (*value) and one descriptor (*fd, -1 if none). */
static ssize_t recv_int(int sock, int *value, int *fd) {
    char control[CMSG_SPACE(sizeof(int))];
    char buf[16];
    struct iovec iov = {buf, sizeof buf};
    struct msghdr mh = {0};
    mh.msg_iov = &iov;
    mh.msg_iovlen = 1;
    mh.msg_control = control;
    mh.msg_controllen = sizeof control;
    ssize_t n;
    while ((n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR) {}
    *fd = -1;
    if (n < (ssize_t)sizeof *value) return -1;
    memcpy(value, buf, sizeof *value);
    struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
    if (cm && cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS) memcpy(fd, CMSG_DATA(cm), sizeof(int));
    return n;
}

static void start_zygote(void) {
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
    char opts[13][96], cgs[64] = "";
    int procs[3], nprocs = 0;
    for (int i = CG_PROCS_1; i <= CG_PROCS_3; i++) if (cg[i] >= 0) procs[nprocs++] = cg[i];
    for (int i = 0; i < nprocs; i++) snprintf(cgs + strlen(cgs), sizeof cgs - strlen(cgs), "%s%d", i ? "," : "", 5 + i);
    snprintf(opts[0], 96, "3");
    snprintf(opts[1], 96, "4");
    snprintf(opts[2], 96, "%s", cgs);
    snprintf(opts[3], 96, "%s", workdir);
    snprintf(opts[4], 96, "%s", iodir);
    snprintf(opts[5], 96, "%s", indir);
    snprintf(opts[6], 96, "%lld", tmpfs_bytes);
    snprintf(opts[7], 96, "%lld", (cpu_kill_us + 999999) / 1000000);
    snprintf(opts[8], 96, "%lld", as_bytes);
    snprintf(opts[9], 96, "%lld", fsize_bytes);
    snprintf(opts[10], 96, "%ld", nproc);
    snprintf(opts[11], 96, "%ld", nofile);
    snprintf(opts[12], 96, "%lld", stack_bytes);
    char **argv = calloc(argc + 14, sizeof(char *));
    if (!argv) die("calloc");
    int k = 0;
    for (int i = 0; i < 3; i++) argv[k++] = prog_argv[i];
    for (int i = 0; i < 13; i++) argv[k++] = opts[i];
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
        if (stack_bytes > 0) set_limit(RLIMIT_STACK, stack_bytes, stack_bytes);
        signal(SIGPIPE, SIG_DFL);
        char *envp[] = {"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/tmp", "LANG=C.UTF-8", "TMPDIR=/tmp", NULL};
        execve(argv[0], argv, envp);
        fprintf(stderr, "hts-runner: cannot start the python zygote %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    free(argv);
    close(sv[1]);
    close(mem);
    zsock = sv[0];
    struct pollfd p = {zsock, POLLIN, 0};
    char ready[8] = "";
    struct iovec iov = {ready, sizeof ready - 1};
    struct msghdr mh = {0};
    mh.msg_iov = &iov;
    mh.msg_iovlen = 1;
    if (poll(&p, 1, 60000) != 1 || recvmsg(zsock, &mh, 0) != 5 || strcmp(ready, "ready") != 0) {
        fprintf(stderr, "hts-runner: the python zygote did not start\n");
        exit(2);
    }
}

/* Ask the zygote for the test's init; its pid, and a pidfd of it in *pidfd. */
static pid_t zygote_fork(int in_fd, int out_fd, int err_fd, int rep_fd, int *pidfd) {
    int fds[4] = {in_fd, out_fd, err_fd, rep_fd};
    send_fds(zsock, "T", fds, 4);
    int pid = -1;
    if (recv_int(zsock, &pid, pidfd) <= 0 || pid <= 0 || *pidfd < 0) {
        errno = EPROTO;
        die("the python zygote did not fork the test");
    }
    return (pid_t)pid;
}
