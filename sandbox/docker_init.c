/*
 * hts-dock: the two trusted steps around hts-runner inside a Docker container.
 *
 *   hts-dock init <v1|v2|none> <cgroup dir> <io dir> <runner> [runner args...]
 *     pid 1 of the container, as root with a handful of capabilities.  Opens
 *     the batch cgroup's counters (bound in from the host, where they can be
 *     reset) and hands them to the runner as inherited descriptors, creates the
 *     runner's private output directory, then becomes the runner.  CPU time,
 *     OOM kills and the memory peak come from the batch cgroup's child "prog",
 *     which each program joins: the runner (and the page cache of the output it
 *     keeps) is charged to the container's cgroup beside it, not to the program.
 *
 *   hts-dock drop <uid> <gid> <program> [args...]
 *     what the runner executes for each test: leaves root for the program's
 *     uid (which drops every capability), removes whatever an earlier test left
 *     in the kernel that a new process could still find (SysV IPC objects,
 *     POSIX message queues, files in the scratch directories), then becomes
 *     the program.  The runner keeps root, so the program can neither signal
 *     nor trace it, nor open its descriptors through /proc.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <unistd.h>

extern char **environ;

static void die(const char *what) {
    fprintf(stderr, "hts-dock: %s: %s\n", what, strerror(errno));
    exit(2);
}

static int open_or_none(const char *dir, const char *name, int flags) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return open(path, flags); /* no O_CLOEXEC: the runner inherits it; -1 if absent */
}

static int cmd_init(int argc, char **argv) {
    if (argc < 6) {
        fprintf(stderr, "hts-dock: init <v1|v2|none> <cgroup dir> <io dir> <runner> [args]\n");
        return 2;
    }
    const char *version = argv[2], *cgdir = argv[3], *iodir = argv[4];
    if (mkdir(iodir, 0700) != 0 && errno != EEXIST) die("mkdir io dir");
    char spec[128] = "";
    const char *flag = NULL;
    if (strcmp(version, "v1") == 0) {
        char mem[4096], cpu[4096], pids[4096];
        snprintf(mem, sizeof mem, "%s/memory/prog", cgdir);
        snprintf(cpu, sizeof cpu, "%s/cpuacct/prog", cgdir);
        snprintf(pids, sizeof pids, "%s/pids/prog", cgdir);
        int mprocs = open_or_none(mem, "cgroup.procs", O_WRONLY);
        int cprocs = open_or_none(cpu, "cgroup.procs", O_WRONLY);
        int pprocs = open_or_none(pids, "cgroup.procs", O_WRONLY);
        int peak = open_or_none(mem, "memory.max_usage_in_bytes", O_RDWR);
        int usage = open_or_none(mem, "memory.usage_in_bytes", O_RDONLY);
        int oom = open_or_none(mem, "memory.oom_control", O_RDONLY);
        int usec = open_or_none(cpu, "cpuacct.usage", O_RDWR);
        int stat = open_or_none(mem, "memory.stat", O_RDONLY);
        if (mprocs < 0 || cprocs < 0 || usec < 0) die("open the program's cgroup");
        /* each program joins the batch's cgroup "prog" (the runner's flat mode does, before
         * it becomes hts-dock drop): its limit is the problem's, its peak every process's */
        snprintf(spec, sizeof spec, "%d,%d,%d,%d,%d,%d,%d,%d", mprocs, cprocs, pprocs, peak, usage, oom, usec, stat);
        flag = "-g";
    } else if (strcmp(version, "v2") == 0) {
        char prog[4096];
        snprintf(prog, sizeof prog, "%s/prog", cgdir);
        int procs = open_or_none(prog, "cgroup.procs", O_WRONLY);
        int stat = open_or_none(prog, "cpu.stat", O_RDONLY);
        int kill = open_or_none(prog, "cgroup.kill", O_WRONLY);
        int peak = open_or_none(prog, "memory.peak", O_RDWR);
        int current = open_or_none(prog, "memory.current", O_RDONLY);
        int events = open_or_none(prog, "memory.events", O_RDONLY);
        int mstat = open_or_none(prog, "memory.stat", O_RDONLY);
        if (procs < 0 || stat < 0) die("open the program's cgroup");
        snprintf(spec, sizeof spec, "%d,%d,%d,%d,%d,%d,%d", procs, stat, kill, peak, current, events, mstat);
        flag = "-G";
    }
    char **args = calloc(argc + 3, sizeof *args);
    if (!args) die("calloc");
    int n = 0;
    args[n++] = argv[5];
    if (flag) {
        args[n++] = (char *)flag;
        args[n++] = spec;
    }
    for (int i = 6; i < argc; i++) args[n++] = argv[i];
    args[n] = NULL;
    execve(args[0], args, environ);
    die("exec runner");
    return 2;
}

#include "wipe_tree.h"

/* Remove everything below dir that this uid may remove (a test's leftovers are all its own). */
static void wipe(const char *dir) {
    wipe_tree(open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC));
}

/* /proc/sysvipc/{shm,msg,sem}: a header line, then "key id ..." per object. */
static void remove_ipc(const char *table, int kind) {
    FILE *f = fopen(table, "r");
    if (!f) return;
    char line[512];
    if (!fgets(line, sizeof line, f)) {
        fclose(f);
        return;
    }
    while (fgets(line, sizeof line, f)) {
        long key;
        int id;
        if (sscanf(line, "%ld %d", &key, &id) != 2) continue;
        if (kind == 0) shmctl(id, IPC_RMID, NULL);
        else if (kind == 1) msgctl(id, IPC_RMID, NULL);
        else semctl(id, 0, IPC_RMID);
    }
    fclose(f);
}

static int cmd_drop(int argc, char **argv) {
    if (argc < 5) {
        fprintf(stderr, "hts-dock: drop <uid> <gid> <program> [args]\n");
        return 2;
    }
    uid_t uid = (uid_t)atol(argv[2]);
    gid_t gid = (gid_t)atol(argv[3]);
    if (uid == 0) {
        errno = EINVAL;
        die("the program must not run as root");
    }
    if (setgroups(0, NULL) != 0) die("setgroups");
    if (setresgid(gid, gid, gid) != 0) die("setresgid");
    /* all three uids non-zero: the kernel clears every capability */
    if (setresuid(uid, uid, uid) != 0) die("setresuid");
    if (getuid() != uid || geteuid() != uid) die("uid did not change");
    remove_ipc("/proc/sysvipc/shm", 0);
    remove_ipc("/proc/sysvipc/msg", 1);
    remove_ipc("/proc/sysvipc/sem", 2);
    wipe("/dev/mqueue");
    wipe("/dev/shm");
    wipe("/tmp");
    execve(argv[4], argv + 4, environ);
    fprintf(stderr, "hts-runner: cannot execute %s: %s\n", argv[4], strerror(errno));
    return 127;
}

int main(int argc, char **argv) {
    if (argc >= 2 && strcmp(argv[1], "init") == 0) return cmd_init(argc, argv);
    if (argc >= 2 && strcmp(argv[1], "drop") == 0) return cmd_drop(argc, argv);
    fprintf(stderr, "hts-dock: init or drop\n");
    return 2;
}
