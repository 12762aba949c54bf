/* SPDX-License-Identifier: Apache-2.0 */
/*
 * hook_fast.c: `docket-hook-fast`, the front of docket-hook that `docket
 * integrate` installs where it is built (x86-64 Linux). It takes the same
 * arguments, `docket-hook-fast [-L PATH] hook claude|codex [...]`.
 *
 * Why a second binary: a process that links glibc spends half a
 * millisecond of every start in glibc's CPU feature and cache probing
 * (CPUID, a trap to the hypervisor on a virtual machine: 5-6 us each, and
 * some hundred of them; bench_hook, docs/performance.md), before main.
 * Claude Code and Codex start a process per hook event. This one links no
 * libc: it only hands the event to the ledger's hook server, the detached
 * folder of an earlier docket-hook (spool_folder.c, cmd_hook.c's
 * hook_server), which records it exactly as docket-hook would and sends the
 * answer back. When anything stands in the way (no server, a server of
 * other arguments, working directory or environment, a slow one, any
 * error) it execs docket-hook beside it with the same arguments, the same
 * environment and the event on its standard input: the answer is then
 * docket-hook's, and docket-hook starts the server for the next event.
 *
 * The protocol (a stream socket PATH/spool/.hook.sock, the ledger directory
 * 0700):
 *   request   "DKHQ1" u32 n CONTEXT[n] u32 m EVENT[m]
 *   answer    "DKHA1" u8 kind: 'A' u32 exit u32 n STDOUT[n] u32 m STDERR[m]
 *                              'F' (not mine: run docket-hook)
 * u32 little-endian. CONTEXT is what the answer depends on besides the
 * event: the ledger path, the arguments after it, the working directory,
 * the environment and the identity of the docket-hook binary, each
 * NUL-terminated (see context_put, identity_put); the server answers only a
 * context byte-for-byte equal to its own. The server's uid
 * must be this process's (SO_PEERCRED).
 *
 * Nothing here may crash: a hook that dies by a signal lets the client run
 * the call. Every read is bounded; a failure anywhere is the fallback.
 */
#include <asm/stat.h>
#include <asm/unistd.h>
#include <stddef.h>
#include <stdint.h>

#include "hook_wire_shared.h"

#define INPUT_MAX ((size_t)64 << 20)  /* cmd_hook.c's */
#define ANSWER_MAX ((size_t)1 << 20)
#define BUDGET_DEFAULT_MS 2000
#define PATH_CAP 4096

#define AF_UNIX 1
#define SOCK_STREAM 1
#define SOCK_NONBLOCK 04000
#define SOCK_CLOEXEC 02000000
#define SOL_SOCKET 1
#define SO_PEERCRED 17
#define MSG_NOSIGNAL 0x4000
#define POLLIN 1
#define POLLOUT 4
#define POLLERR 8
#define POLLHUP 16
#define EINTR 4
#define EAGAIN 11
#define PROT_READ 1
#define PROT_WRITE 2
#define MAP_PRIVATE 2
#define MAP_ANONYMOUS 0x20
#define MREMAP_MAYMOVE 1
#define CLOCK_MONOTONIC 1

struct pollfd_k {
	int fd;
	short events, revents;
};

struct sockaddr_un_k {
	unsigned short family;
	char path[108];
};

struct ucred_k {
	int pid;
	unsigned uid, gid;
};

struct timespec_k {
	long sec, nsec;
};

/* ---- system calls ---- */

static long sys6(long n, long a, long b, long c, long d, long e, long f)
{
	long ret;
	register long r10 __asm__("r10") = d;
	register long r8 __asm__("r8") = e;
	register long r9 __asm__("r9") = f;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
			 : "rcx", "r11", "memory");
	return ret;
}

#define SYS(n, a, b, c) sys6((n), (long)(a), (long)(b), (long)(c), 0, 0, 0)

__attribute__((noreturn)) static void sys_exit(int code)
{
	for (;;)
		SYS(__NR_exit_group, code, 0, 0);
}

/* ---- bytes (no libc; compiled with -fno-builtin and without loop-to-call
 * transformations, so the compiler calls no memcpy of its own) ---- */

static void *copy(void *dst, const void *src, size_t n)
{
	unsigned char *d = dst;
	const unsigned char *s = src;

	while (n--)
		*d++ = *s++;
	return dst;
}

static void zero(void *dst, size_t n)
{
	unsigned char *d = dst;

	while (n--)
		*d++ = 0;
}

static int same(const void *a, const void *b, size_t n)
{
	const unsigned char *x = a, *y = b;

	for (; n; n--, x++, y++)
		if (*x != *y)
			return 0;
	return 1;
}

static size_t str_len(const char *s)
{
	size_t n = 0;

	while (s[n])
		n++;
	return n;
}

static int str_eq(const char *a, const char *b)
{
	size_t n = str_len(a);

	return n == str_len(b) && same(a, b, n);
}

/* ---- a growing buffer (anonymous memory, no allocator) ---- */

typedef struct {
	char *ptr;
	size_t len, cap;
	int failed;
} buf;

static int buf_reserve(buf *b, size_t more)
{
	size_t cap = b->cap ? b->cap : 65536;
	long p;

	if (b->failed || more > INPUT_MAX * 2 || b->len + more <= b->cap)
		return b->failed || more > INPUT_MAX * 2 ? -1 : 0;
	while (cap < b->len + more)
		cap *= 2;
	p = b->ptr ? sys6(__NR_mremap, (long)b->ptr, (long)b->cap, (long)cap, MREMAP_MAYMOVE, 0, 0)
		   : sys6(__NR_mmap, 0, (long)cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p < 0 && p > -4096) {
		b->failed = 1;
		return -1;
	}
	b->ptr = (char *)p;
	b->cap = cap;
	return 0;
}

static void buf_put(buf *b, const void *p, size_t n)
{
	if (buf_reserve(b, n) == 0) {
		copy(b->ptr + b->len, p, n);
		b->len += n;
	}
}

static void buf_put_u32(buf *b, uint32_t v)
{
	unsigned char le[4];

	hook_wire_le32_put(le, v);
	buf_put(b, le, 4);
}

static void buf_put_str0(buf *b, const char *s)
{
	buf_put(b, s, str_len(s) + 1);
}

/* ---- time and descriptors ---- */

static long now_ms(void)
{
	struct timespec_k t;

	if (SYS(__NR_clock_gettime, CLOCK_MONOTONIC, &t, 0) != 0)
		return 0;
	return t.sec * 1000 + t.nsec / 1000000;
}

/* Wait until fd is ready for `events`, until `deadline` (ms): 0, or -1. */
static int wait_fd(int fd, short events, long deadline)
{
	for (;;) {
		struct pollfd_k p = { fd, events, 0 };
		long left = deadline - now_ms(), rc;

		if (left <= 0)
			return -1;
		rc = SYS(__NR_poll, &p, 1, left);
		if (rc == -EINTR)
			continue;
		/* hang-up and error too: the read or write that follows says
		 * what it is (end of file, the peer gone) */
		return rc == 1 && (p.revents & (events | POLLHUP | POLLERR)) ? 0 : -1;
	}
}

/* All `n` bytes sent (`out`: sendto, without SIGPIPE) or read, waiting
 * for the socket until `deadline`: 0, or -1. */
static int io_all(int fd, char *p, size_t n, int out, long deadline)
{
	while (n) {
		long r = out ? sys6(__NR_sendto, fd, (long)p, (long)n, MSG_NOSIGNAL, 0, 0) : SYS(__NR_read, fd, p, n);

		if (r == -EAGAIN || r == -EINTR) {
			if (wait_fd(fd, out ? POLLOUT : POLLIN, deadline) != 0)
				return -1;
			continue;
		}
		if (r <= 0)
			return -1;
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

static int send_all(int fd, const char *p, size_t n, long deadline)
{
	return io_all(fd, (char *)p, n, 1, deadline);
}

static int recv_all(int fd, void *dst, size_t n, long deadline)
{
	return io_all(fd, dst, n, 0, deadline);
}

static int recv_u32(int fd, uint32_t *v, long deadline)
{
	unsigned char le[4];

	if (recv_all(fd, le, 4, deadline) != 0)
		return -1;
	*v = hook_wire_le32_get(le);
	return 0;
}

static int write_all(int fd, const char *p, size_t n)
{
	while (n) {
		long w = SYS(__NR_write, fd, p, n);

		if (w == -EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* ---- the invocation ---- */

typedef struct {
	int argc;
	char **argv, **envp;
	const char *ledger;  /* -L PATH, else $DOCKET_LEDGER, else ./.docket */
	int rest;            /* the first argument after the ledger's ("hook") */
	int enforce;
	long budget_ms;
} invocation;

static const char *env_get(char **envp, const char *name)
{
	size_t n = str_len(name);

	for (; *envp; envp++)
		if (same(*envp, name, n) && (*envp)[n] == '=')
			return *envp + n + 1;
	return NULL;
}

static long parse_ms(const char *s)
{
	long v = 0;

	if (!*s)
		return -1;
	for (; *s; s++) {
		if (*s < '0' || *s > '9' || v > 100000000)
			return -1;
		v = v * 10 + (*s - '0');
	}
	return v;
}

/* 0 when the arguments are docket-hook's (hook_main.c's reading of them;
 * --enforce is read by the caller, before anything can fail). */
static int invocation_read(invocation *inv)
{
	const char *env;
	int i = 1;

	if (i + 1 < inv->argc && str_eq(inv->argv[i], "-L")) {
		inv->ledger = inv->argv[i + 1];
		i += 2;
	} else {
		env = env_get(inv->envp, "DOCKET_LEDGER");
		inv->ledger = env && *env ? env : "./.docket";
	}
	if (i >= inv->argc || !str_eq(inv->argv[i], "hook"))
		return -1;
	inv->rest = i;
	inv->budget_ms = BUDGET_DEFAULT_MS;
	for (; i < inv->argc; i++) {
		if (str_eq(inv->argv[i], "--budget") && i + 1 < inv->argc)
			inv->budget_ms = parse_ms(inv->argv[i + 1]);
		else if (same(inv->argv[i], "--budget=", 9) && str_len(inv->argv[i]) > 9)
			inv->budget_ms = parse_ms(inv->argv[i] + 9);
	}
	return inv->budget_ms > 0 ? 0 : -1;
}

/* The context (the header's description; hook_server.c builds the same). */
static int context_put(buf *b, const invocation *inv)
{
	char cwd[PATH_CAP];
	long n = SYS(__NR_getcwd, cwd, sizeof(cwd), 0);

	if (n <= 0)
		return -1;
	buf_put_str0(b, inv->ledger);
	for (int i = inv->rest; i < inv->argc; i++)
		buf_put_str0(b, inv->argv[i]);
	buf_put(b, "", 1);
	buf_put_str0(b, cwd);
	for (char **e = inv->envp; *e; e++)
		if (!hook_wire_env_ignored(*e))
			buf_put_str0(b, *e);
	return b->failed ? -1 : 0;
}

/* All of standard input into `in`: 0; -1 past INPUT_MAX or on an error;
 * -2 when it has not ended by `deadline` (a client that never closes it). */
static int read_input(buf *in, long deadline)
{
	for (;;) {
		long r;

		if (in->cap - in->len < 4096 && buf_reserve(in, 65536) != 0)
			return -1;
		if (wait_fd(0, POLLIN, deadline) != 0)
			return now_ms() >= deadline ? -2 : -1;
		r = SYS(__NR_read, 0, in->ptr + in->len, in->cap - in->len);
		if (r == -EINTR)
			continue;
		if (r < 0)
			return -1;
		if (r == 0)
			return 0;
		in->len += (size_t)r;
		if (in->len > INPUT_MAX)
			return -1;
	}
}

/* The path of docket-hook beside this binary into `path` ("" when there
 * is none to name). */
static void hook_path(char path[PATH_CAP])
{
	static const char name[] = "docket-hook";
	long n = SYS(__NR_readlink, "/proc/self/exe", path, PATH_CAP - sizeof(name) - 1);
	char *slash = NULL;

	for (long i = 0; i < n; i++)
		if (path[i] == '/')
			slash = path + i;
	if (n <= 0 || !slash) {
		path[0] = '\0';
		return;
	}
	copy(slash + 1, name, sizeof(name));
}

static void buf_put_num(buf *b, unsigned long v)
{
	char d[24];
	int n = 0;

	do
		d[sizeof(d) - 1 - n++] = (char)('0' + v % 10);
	while ((v /= 10) && n < (int)sizeof(d));
	buf_put(b, d + sizeof(d) - n, (size_t)n);
}

/* The identity of the docket-hook that would answer, the context's last
 * item (hook_server.c's the same of its own binary): a server forked by an
 * older docket-hook, replaced by an upgrade since, is not this one's. */
static int identity_put(buf *b, const char *hook)
{
	struct stat st;

	if (!hook[0] || SYS(__NR_stat, hook, &st, 0) != 0)
		return -1;
	buf_put(b, "exe ", 4);
	buf_put_num(b, st.st_dev);
	buf_put(b, ":", 1);
	buf_put_num(b, st.st_ino);
	buf_put(b, ":", 1);
	buf_put_num(b, st.st_size);
	buf_put(b, ":", 1);
	buf_put_num(b, st.st_mtime);
	buf_put(b, ".", 1);
	buf_put_num(b, st.st_mtime_nsec);
	buf_put(b, "", 1);
	return b->failed ? -1 : 0;
}

/* ---- the server ---- */

/* A connected socket to the ledger's hook server, or -1. A local stream
 * socket connects at once or not at all (EAGAIN: its backlog is full). */
static int server_connect(const invocation *inv)
{
	struct sockaddr_un_k a;
	size_t n = str_len(inv->ledger);
	static const char tail[] = "/spool/.hook.sock";
	struct ucred_k cred;
	unsigned len = sizeof(cred);
	int fd;

	if (n + sizeof(tail) > sizeof(a.path))
		return -1;  /* no short name for it: docket-hook (hook_server.c binds none either) */
	zero(&a, sizeof(a));
	a.family = AF_UNIX;
	copy(a.path, inv->ledger, n);
	copy(a.path + n, tail, sizeof(tail));
	fd = (int)SYS(__NR_socket, AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	/* the server must be this user's: a socket anyone could have made
	 * would otherwise answer for docket */
	if (SYS(__NR_connect, fd, &a, sizeof(a)) != 0 ||
	    sys6(__NR_getsockopt, fd, SOL_SOCKET, SO_PEERCRED, (long)&cred, (long)&len, 0) != 0 ||
	    len != sizeof(cred) || cred.uid != (unsigned)SYS(__NR_geteuid, 0, 0, 0)) {
		SYS(__NR_close, fd, 0, 0);
		return -1;
	}
	return fd;
}

/* One text of the answer (u32 length, bytes) into `b`: 0, or -1. */
static int recv_text(int fd, buf *b, long deadline)
{
	uint32_t n;

	if (recv_u32(fd, &n, deadline) != 0 || n > ANSWER_MAX || buf_reserve(b, n) != 0 ||
	    recv_all(fd, b->ptr, n, deadline) != 0)
		return -1;
	b->len = n;
	return 0;
}

/* The server's answer, written out; returns only on a failure (-1). */
static int ask_server(const invocation *inv, const char *hook, const buf *in, long deadline)
{
	buf req = { 0, 0, 0, 0 }, ctx = { 0, 0, 0, 0 }, out = { 0, 0, 0, 0 }, err = { 0, 0, 0, 0 };
	char head[6];
	uint32_t code;
	int fd;

	if (context_put(&ctx, inv) != 0 || identity_put(&ctx, hook) != 0 || ctx.len > UINT32_MAX)
		return -1;
	buf_put(&req, "DKHQ1", 5);
	buf_put_u32(&req, (uint32_t)ctx.len);
	buf_put(&req, ctx.ptr, ctx.len);
	buf_put_u32(&req, (uint32_t)in->len);
	if (req.failed || (fd = server_connect(inv)) < 0)
		return -1;
	if (send_all(fd, req.ptr, req.len, deadline) != 0 || send_all(fd, in->ptr, in->len, deadline) != 0 ||
	    recv_all(fd, head, 6, deadline) != 0 || !same(head, "DKHA1", 5) || head[5] != 'A' ||
	    recv_u32(fd, &code, deadline) != 0 || code > 255 || recv_text(fd, &out, deadline) != 0 ||
	    recv_text(fd, &err, deadline) != 0) {
		SYS(__NR_close, fd, 0, 0);
		return -1;  /* 'F', a short answer, a late one: docket-hook answers */
	}
	/* the answer is complete and recorded: from here on it is the answer */
	(void)write_all(1, out.ptr, out.len);
	(void)write_all(2, err.ptr, err.len);
	sys_exit((int)code);
}

/* ---- docket-hook, the fallback ---- */

static void say(const char *s)
{
	(void)write_all(2, s, str_len(s));
}

/* exec docket-hook beside this binary (`hook`), `in` (when read) as its
 * standard input; returns only when that is impossible. */
static void run_docket_hook(const invocation *inv, char *hook, const buf *in, int read)
{
	int fd;

	if (!hook[0])
		return;
	if (read) {
		/* the event, read already, as a file docket-hook reads from the start */
		if ((fd = (int)SYS(__NR_memfd_create, "docket-hook-input", 0, 0)) < 0)
			return;
		if (write_all(fd, in->ptr, in->len) != 0 || SYS(__NR_lseek, fd, 0, 0) != 0 ||
		    (fd != 0 && SYS(__NR_dup2, fd, 0, 0) != 0))
			return;
	}
	inv->argv[0] = hook;
	SYS(__NR_execve, hook, inv->argv, inv->envp);
}

__attribute__((noreturn)) static void fail_closed(const invocation *inv)
{
	/* neither the server nor docket-hook can answer: as docket-hook's own
	 * errors, a denial under --enforce (cmd_hook.c) */
	say(inv->enforce ? "docket: cannot run docket-hook beside docket-hook-fast; denied because docket enforces a "
			   "policy and fails closed\n"
			 : "docket: cannot run docket-hook beside docket-hook-fast: the event is not recorded\n");
	sys_exit(inv->enforce ? 2 : 1);
}

/* The event did not arrive within the budget: docket-hook's watchdog
 * answer (cmd_hook.c), the event unread, so one that may block. */
__attribute__((noreturn)) static void out_of_budget(const invocation *inv)
{
	const char *head = inv->enforce ? "docket: could not record the call within its budget of "
					: "docket: could not record the hook event within its budget of ";
	const char *tail = inv->enforce ? " ms; denied because docket enforces a policy and fails closed\n" : " ms\n";
	buf b = { 0, 0, 0, 0 };

	buf_put(&b, head, str_len(head));
	buf_put_num(&b, (unsigned long)inv->budget_ms);
	buf_put(&b, tail, str_len(tail));
	if (!b.failed)
		(void)write_all(2, b.ptr, b.len);
	sys_exit(inv->enforce ? 2 : 1);
}

__attribute__((noreturn, used)) void hook_fast_main(long *sp);
__attribute__((noreturn, used)) void hook_fast_main(long *sp)
{
	static char hook[PATH_CAP];
	invocation inv = { 0 };
	buf in = { 0, 0, 0, 0 };
	long start = now_ms();

	inv.argc = (int)sp[0];
	inv.argv = (char **)(sp + 1);
	inv.envp = inv.argv + inv.argc + 1;
	if (inv.argc < 1)
		fail_closed(&inv);  /* no argv[0] to replace: nothing to exec safely */
	for (int i = 0; i < inv.argc; i++)
		if (str_eq(inv.argv[i], "--enforce"))
			inv.enforce = 1;
	hook_path(hook);
	if (invocation_read(&inv) != 0) {
		run_docket_hook(&inv, hook, &in, 0);  /* usage, --help, anything else: its answer */
		fail_closed(&inv);
	}
	switch (read_input(&in, start + inv.budget_ms)) {
	case 0:
		(void)ask_server(&inv, hook, &in, start + inv.budget_ms / 4);  /* then docket-hook has its budget */
		break;
	case -2:
		out_of_budget(&inv);
	default:
		break;  /* docket-hook reads what there is, and reports it */
	}
	run_docket_hook(&inv, hook, &in, 1);
	fail_closed(&inv);
}

/* The entry point: the stack holds argc, argv, NULL, envp, NULL. */
__asm__(".text\n"
	".global _start\n"
	"_start:\n"
	"	xor %rbp, %rbp\n"
	"	mov %rsp, %rdi\n"
	"	and $-16, %rsp\n"
	"	call hook_fast_main\n"
	"	hlt\n");
