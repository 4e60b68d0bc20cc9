/* The fd-relative tree wipe shared by hts-runner (runner.c) and the Docker backend's init
 * (docker_init.c): both include this file; each binary's cache key hashes it (sandbox/cache.py). */
#ifndef HTS_WIPE_TREE_H
#define HTS_WIPE_TREE_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Remove everything below the directory open at `top` (closed here), holding one
 * directory descriptor at a time however deep the tree (paths beyond PATH_MAX included):
 * down into the first subdirectory that is not empty, up by "..", each directory read
 * again until it is empty.  Directories left unreadable are opened up first. */
static void wipe_tree(int top) {
    int fd = top, depth = 0;
    long long steps = 0;
    while (fd >= 0 && steps++ < 10000000) {
        DIR *d = fdopendir(dup(fd));
        if (!d) break;
        int descended = 0;
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
            if (unlinkat(fd, e->d_name, 0) == 0) continue;
            if (errno != EISDIR && errno != EPERM) continue;
            if (unlinkat(fd, e->d_name, AT_REMOVEDIR) == 0) continue;
            fchmodat(fd, e->d_name, 0700, 0);
            int sub = openat(fd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (sub < 0) continue;
            close(fd);
            fd = sub;
            depth++;
            descended = 1;
            break;
        }
        closedir(d);
        if (descended) continue;
        if (depth == 0) break;
        /* this directory is as empty as it gets: back up, where it is removed */
        struct stat here;
        if (fstat(fd, &here) != 0) break;
        int up = openat(fd, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        close(fd);
        fd = up;
        depth--;
        if (fd < 0) break;
        /* a directory that stays non-empty would be entered again forever: give up */
        DIR *check = fdopendir(dup(fd));
        int stuck = 0;
        if (check) {
            while ((e = readdir(check)) != NULL) {
                if (e->d_ino == here.st_ino && strcmp(e->d_name, "..") != 0 && strcmp(e->d_name, ".") != 0) {
                    stuck = unlinkat(fd, e->d_name, AT_REMOVEDIR) != 0;
                    break;
                }
            }
            closedir(check);
        }
        if (stuck) break;
    }
    if (fd >= 0) close(fd);
}

#endif
