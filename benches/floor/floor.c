/*
 * floor CMD [ARGS...]: the least a monitor of one step must do, as a program.
 *
 * It creates a cgroup, starts CMD inside it with clone3(CLONE_INTO_CGROUP),
 * waits for it, reads the cgroup's cpu.stat once and removes the cgroup.
 * What `floor CMD` adds to `CMD` is the physical floor of a measured step on
 * this machine (benches/floor/README.md).
 *
 *   FLOOR_CGROUP2=DIR  the cgroup2 directory to create the step's cgroup in
 *                      (default: /sys/fs/cgroup/unified when that is a cgroup2
 *                      mount, i.e. a hybrid host, else /sys/fs/cgroup)
 *   FLOOR_V1=memory    also a cgroup v1 memory cgroup below this process's
 *                      own one, joined by the child before exec, its
 *                      memory.max_usage_in_bytes read after the wait
 *   FLOOR_PRINT=1      print what was read to stderr
 *
 * Exit status: CMD's, 128+N when a signal N ended it, 127 when CMD was not
 * found, 126 when it could not be executed, 125 when floor itself failed
 * (after saying what failed).
 *
 * Build: gcc -O2 -static -o floor floor.c
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <linux/sched.h> /* struct clone_args, CLONE_INTO_CGROUP */
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

enum { EXIT_FLOOR = 125, EXIT_NOEXEC = 126, EXIT_NOTFOUND = 127 };

/* Where cgroup v1's memory hierarchy is mounted on a hybrid host. */
static const char V1_MEMORY_MOUNT[] = "/sys/fs/cgroup/memory";

/* The cgroups made so far, removed on every way out ("" = none). Buffers
 * are sized to what a cgroup path or file here holds, not PATH_MAX: each
 * page a run touches is a page fault, and 4 KiB buffers cost 4-7 of them
 * a run (perf stat -e page-faults). A longer path is an error that says
 * so, never a truncation. */
static char v2_dir[1024];
static char v1_dir[1024];

/* For the signal handler: this process, the child to pass a signal on to
 * (0 = none yet), and a signal that came before the child was known. */
static pid_t floor_pid;
static volatile sig_atomic_t child_pid;
static volatile sig_atomic_t early_signal;

/* Removes the cgroups made; 0, or -1 after saying which one stayed. */
static int remove_cgroups(void)
{
	int failed = 0;

	/* rmdir of a cgroup whose only task was reaped: nothing else holds it. */
	if (v1_dir[0] != '\0' && rmdir(v1_dir) != 0) {
		fprintf(stderr, "floor: rmdir %s: %s\n", v1_dir, strerror(errno));
		failed = -1;
	}
	if (v2_dir[0] != '\0' && rmdir(v2_dir) != 0) {
		fprintf(stderr, "floor: rmdir %s: %s\n", v2_dir, strerror(errno));
		failed = -1;
	}
	v1_dir[0] = v2_dir[0] = '\0';
	return failed;
}

/* Says what failed (with errno's text when `with_errno`), removes what was
 * made, exits 125. */
static void __attribute__((noreturn, format(printf, 2, 3))) die(int with_errno, const char *fmt, ...)
{
	int saved = errno;
	va_list ap;

	fputs("floor: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	if (with_errno)
		fprintf(stderr, ": %s", strerror(saved));
	fputc('\n', stderr);
	(void)remove_cgroups();
	exit(EXIT_FLOOR);
}

/* snprintf that dies instead of truncating a path. */
static void __attribute__((format(printf, 3, 4))) path_of(char *out, size_t size, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(out, size, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= size)
		die(0, "a cgroup path is longer than %zu bytes", size - 1);
}

static int is_cgroup2(const char *dir)
{
	struct statfs fs;

	return statfs(dir, &fs) == 0 && fs.f_type == CGROUP2_SUPER_MAGIC;
}

/* `what` failed in root: says so, and whether root is no cgroup2 directory
 * at all (asked only on failure, so that a run pays for no statfs). */
static void __attribute__((noreturn)) die_in(const char *root, const char *what, const char *path)
{
	int saved = errno;

	if (!is_cgroup2(root))
		die(0, "%s is not a cgroup2 directory (set FLOOR_CGROUP2)", root);
	errno = saved;
	die(1, "%s %s", what, path);
}

/* Opens `dir`/`name` (flags | O_CLOEXEC); dies on failure. */
static int open_in(const char *dir, const char *name, int flags)
{
	char path[sizeof v2_dir + 64];
	int fd;

	path_of(path, sizeof path, "%s/%s", dir, name);
	fd = open(path, flags | O_CLOEXEC);
	if (fd < 0)
		die(1, "open %s", path);
	return fd;
}

/* One read of the whole file behind `fd` into buf (NUL-terminated): a
 * cgroup or /proc file is generated whole on the first read
 * (Documentation/filesystems/seq_file.rst), so a read that does not fill
 * buf got all of it. Dies on failure, naming `dir`/`name`. */
static void read_whole(int fd, const char *dir, const char *name, char *buf, size_t size)
{
	ssize_t n;

	do
		n = pread(fd, buf, size - 1, 0);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		die(1, "read %s/%s", dir, name);
	if ((size_t)n == size - 1)
		die(0, "%s/%s is longer than %zu bytes", dir, name, size - 2);
	buf[n] = '\0';
}

/* This process's cgroup in the v1 memory hierarchy: the path of the line
 * whose controller list holds "memory" in /proc/self/cgroup
 * ("ID:CONTROLLERS:PATH", Documentation/admin-guide/cgroup-v1/cgroups.rst). */
static void own_v1_memory_cgroup(char *out, size_t size)
{
	char buf[2048];
	char *line, *next;

	int fd = open_in("/proc/self", "cgroup", O_RDONLY);

	read_whole(fd, "/proc/self", "cgroup", buf, sizeof buf);
	close(fd);
	for (line = buf; *line != '\0'; line = next) {
		char *controllers, *path, *c, *end;

		next = strchr(line, '\n');
		if (next != NULL)
			*next++ = '\0';
		else
			next = line + strlen(line);
		controllers = strchr(line, ':');
		if (controllers == NULL)
			continue;
		controllers++;
		path = strchr(controllers, ':');
		if (path == NULL)
			continue;
		*path++ = '\0';
		for (c = controllers; *c != '\0'; c = *end == ',' ? end + 1 : end) {
			end = strchrnul(c, ',');
			if (end - c == 6 && memcmp(c, "memory", 6) == 0) {
				path_of(out, size, "%s", path);
				return;
			}
		}
	}
	die(0, "FLOOR_V1=memory: /proc/self/cgroup has no line of a cgroup v1 memory hierarchy");
}

static void pass_on(int sig)
{
	pid_t pid = child_pid;

	if (getpid() != floor_pid) {
		/* The child, before exec: it dies of the signal as the command
		 * would (delivered once the handler returns). kill, not raise:
		 * after a raw clone3, glibc's cached thread id is the parent's. */
		signal(sig, SIG_DFL);
		kill(getpid(), sig);
		return;
	}
	if (pid > 0)
		kill(pid, sig);
	else
		early_signal = sig;
}

/* In the child: join the v1 memory cgroup (if any) and exec CMD. Never
 * returns; failures say what failed on stderr. */
static void __attribute__((noreturn)) run_child(int tasks_fd, char **argv)
{
	/* "0" is the writer itself (Documentation/admin-guide/cgroup-v1/
	 * cgroups.rst, "tasks"). A `tasks` write moves one thread without
	 * the thread-group lock; a cgroup.procs write takes it for writing
	 * (cgroup_attach_lock in kernel/cgroup/cgroup.c), a percpu rwsem
	 * whose writer waits for an RCU grace period. */
	if (tasks_fd >= 0 && write(tasks_fd, "0", 1) != 1) {
		fprintf(stderr, "floor: joining %s (write 0 to tasks): %s\n", v1_dir, strerror(errno));
		_exit(EXIT_FLOOR);
	}
	execvp(argv[0], argv);
	fprintf(stderr, "floor: %s: %s\n", argv[0], strerror(errno));
	_exit(errno == ENOENT || errno == ENOTDIR ? EXIT_NOTFOUND : EXIT_NOEXEC);
}

int main(int argc, char **argv)
{
	const char *root = getenv("FLOOR_CGROUP2");
	const char *v1 = getenv("FLOOR_V1");
	const char *print = getenv("FLOOR_PRINT");
	int want_v1 = v1 != NULL && v1[0] != '\0';
	int want_print = print != NULL && strcmp(print, "1") == 0;
	char stat_buf[1024];
	char usage_buf[64];
	struct clone_args args;
	struct sigaction sa;
	int cgroup_fd, stat_fd, tasks_fd = -1, usage_fd = -1, status;
	long pid;
	pid_t got;

	if (argc < 2) {
		fputs("usage: floor CMD [ARGS...]  (see benches/floor/README.md)\n", stderr);
		return EXIT_FLOOR;
	}
	if (want_v1 && strcmp(v1, "memory") != 0)
		die(0, "FLOOR_V1=%s: only FLOOR_V1=memory is known", v1);
	if (root == NULL || root[0] == '\0')
		root = is_cgroup2("/sys/fs/cgroup/unified") ? "/sys/fs/cgroup/unified" : "/sys/fs/cgroup";

	/* Passed on to the child, so that the cgroups are removed after it
	 * ends. */
	floor_pid = getpid();
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = pass_on;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGINT, &sa, NULL) != 0 || sigaction(SIGTERM, &sa, NULL) != 0 ||
	    sigaction(SIGHUP, &sa, NULL) != 0 || sigaction(SIGQUIT, &sa, NULL) != 0)
		die(1, "sigaction");

	/* The pid in the name: no two live floors share one. */
	path_of(v2_dir, sizeof v2_dir, "%s/floor.%ld", root, (long)floor_pid);
	if (mkdir(v2_dir, 0755) != 0) {
		char made[sizeof v2_dir];

		memcpy(made, v2_dir, sizeof made);
		v2_dir[0] = '\0'; /* not made: never remove it */
		die_in(root, "mkdir", made);
	}
	cgroup_fd = open(v2_dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (cgroup_fd < 0)
		die(1, "open %s", v2_dir);
	/* Opened now, read once after the wait: the step's end costs one read
	 * (a directory that is no cgroup has no cpu.stat). */
	stat_fd = openat(cgroup_fd, "cpu.stat", O_RDONLY | O_CLOEXEC);
	if (stat_fd < 0) {
		char path[sizeof v2_dir + 16];

		path_of(path, sizeof path, "%s/cpu.stat", v2_dir);
		die_in(root, "open", path);
	}

	if (want_v1) {
		char own[sizeof v1_dir];

		own_v1_memory_cgroup(own, sizeof own);
		/* "/" is the hierarchy's root: no doubled slash. */
		path_of(v1_dir, sizeof v1_dir, "%s%s/floor.%ld", V1_MEMORY_MOUNT, strcmp(own, "/") == 0 ? "" : own,
			(long)floor_pid);
		if (mkdir(v1_dir, 0755) != 0) {
			char made[sizeof v1_dir];

			memcpy(made, v1_dir, sizeof made);
			v1_dir[0] = '\0';
			die(1, "mkdir %s", made);
		}
		tasks_fd = open_in(v1_dir, "tasks", O_WRONLY);
		usage_fd = open_in(v1_dir, "memory.max_usage_in_bytes", O_RDONLY);
	}

	/* clone3 has no glibc wrapper: the raw system call
	 * (https://man7.org/linux/man-pages/man2/clone3.2.html). */
	memset(&args, 0, sizeof args);
	args.flags = CLONE_INTO_CGROUP;
	args.exit_signal = SIGCHLD;
	args.cgroup = (uint64_t)cgroup_fd;
	pid = syscall(SYS_clone3, &args, sizeof args);
	if (pid < 0)
		die(1, "clone3(CLONE_INTO_CGROUP) into %s", v2_dir);
	if (pid == 0)
		run_child(tasks_fd, argv + 1);
	child_pid = (pid_t)pid;
	/* A signal between sigaction and the line above is passed on now (one
	 * after it may be passed on twice, which is harmless). */
	if (early_signal != 0)
		kill((pid_t)pid, early_signal);

	do
		got = wait4((pid_t)pid, &status, 0, NULL);
	while (got < 0 && errno == EINTR);
	if (got < 0)
		die(1, "wait4 %ld", pid);
	child_pid = 0;
	/* The fds stay open: exit closes them, and an open file does not keep
	 * a cgroup from being removed. */

	/* The one read a monitor needs after the step: its CPU time. */
	read_whole(stat_fd, v2_dir, "cpu.stat", stat_buf, sizeof stat_buf);
	if (want_print)
		fprintf(stderr, "%s/cpu.stat:\n%s", v2_dir, stat_buf);
	if (want_v1) {
		read_whole(usage_fd, v1_dir, "memory.max_usage_in_bytes", usage_buf, sizeof usage_buf);
		if (want_print)
			fprintf(stderr, "%s/memory.max_usage_in_bytes: %s", v1_dir, usage_buf);
	}

	if (remove_cgroups() != 0)
		return EXIT_FLOOR;
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}
