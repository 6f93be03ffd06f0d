/*
 * The carrier crash tests' victim and reclaimer (check_crash.c), run as
 * separate processes:
 *   carrier_crasher hold DIR [child|detach]  attach a carrier (state
 *       DIR/state, id "crash"), write a file, sync; with "child" fork a
 *       process that joins the namespace and holds a file of the mount
 *       open; with "detach" detach; print "ready CHILDPID" and wait to be
 *       killed. S0_CRASH_AT=carrier.<point> kills it inside attach/detach.
 *   carrier_crasher reclaim STATE     s0__carrier_reclaim2 in a fresh
 *       process; prints "records R processes P mounts M loops L".
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "carenv.h"
#include "local/runtime/carrier/carrier.h"

static int fail(const char *what, s0_error *e)
{
	fprintf(stderr, "crasher: %s: %s\n", what, e ? s0_error_message(e) : "?");
	return 1;
}

int main(int argc, char **argv)
{
	s0_error *e = NULL;
	if (argc == 3 && strcmp(argv[1], "reclaim") == 0) {
		s0__carrier_reclaimed r;
		if (s0__carrier_reclaim2(argv[2], &r, &e) != S0_OK)
			return fail("reclaim", e);
		printf("records %u processes %u mounts %u loops %u\n", r.records, r.processes, r.mounts,
		       r.loops);
		return 0;
	}
	if (argc < 3 || strcmp(argv[1], "hold") != 0) {
		fprintf(stderr, "usage: carrier_crasher hold DIR [child] | reclaim STATE\n");
		return 2;
	}
	char store[4096], state[4096];
	snprintf(store, sizeof store, "%s/store", argv[2]);
	snprintf(state, sizeof state, "%s/state", argv[2]);
	carenv env;
	if (carenv_open(&env, store, 32u << 20, &e) != S0_OK)
		return fail("store", e);
	s0__branch *b = NULL;
	if (carenv_branch(&env, &b, &e) != S0_OK)
		return fail("branch", e);
	s0__blockdev dev;
	s0__branch_blockdev(b, &dev);
	s0__carrier_opts o = {.dev = &dev, .state_dir = state, .id = "crash"};
	s0__carrier *c = NULL;
	if (s0__carrier_attach(&o, &c, &e) != S0_OK)
		return fail("attach", e);
	char path[8192];
	snprintf(path, sizeof path, "%s/workspace/written.txt", s0__carrier_host_root(c));
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, "x\n", 2) != 2 || close(fd) != 0)
		return fail("write", NULL);
	if (s0__carrier_sync(c, &e) != S0_OK)
		return fail("sync", e);
	pid_t child = 0;
	if (argc > 3 && strcmp(argv[3], "child") == 0) {
		int p[2];
		if (pipe(p) != 0)
			return fail("pipe", NULL);
		child = fork();
		if (child == 0) {
			close(p[0]);
			snprintf(path, sizeof path, "%s/workspace/written.txt", s0__carrier_root(c));
			if (s0__carrier_enter(c) != 0 || open(path, O_RDONLY) < 0)
				_exit(3);
			if (write(p[1], "k", 1) != 1)
				_exit(4);
			for (;;)
				pause();
		}
		close(p[1]);
		char ch;
		if (read(p[0], &ch, 1) != 1)
			return fail("child", NULL);
	}
	if (argc > 3 && strcmp(argv[3], "detach") == 0 && s0__carrier_detach(c, &e) != S0_OK)
		return fail("detach", e);
	printf("ready %d\n", (int)child);
	fflush(stdout);
	for (;;)
		pause();
}
