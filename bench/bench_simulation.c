/*
 * bench_simulation.c: how fast the simulated round of several authorities runs (tests/sim/simnet.h):
 * thousands of epochs of n authorities at 200 ms round trips in one process, the simulated time
 * printed against the real time it took (the anchor: how many times faster than the network it
 * simulates), with the simulated epochs per real second, what the network carried, and every
 * invariant violation the checks found.
 *
 *   bench_simulation [--epochs N] [--seed S] [--members N] [--threshold K] [--delay-ms D]
 *                    [--jitter-ms J] [--step-ms T] [--faults] [--loss-permille L]
 *                    [--registrations R] [--health H] [--services S] [--progress E] [--keep]
 *
 * The defaults: 2000 epochs of 5 authorities (k = 3) at 100 ms one way with 20 ms of jitter, the
 * workload of simnet_options_init, no faults; --faults runs a scenario of loss (--loss-permille,
 * 10 by default), partitions, crashes and a slow member between quiet stretches, and ends with
 * the convergence check. --progress prints a line every E epochs. Exit status 0 when no invariant
 * broke, 1 when one did (or the simulation could not run), 2 for a bad option.
 */
#include "base/error.h"
#include "tests/sim/simnet.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_seconds(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int usage(void)
{
	fprintf(stderr, "usage: bench_simulation [--epochs N] [--seed S] [--members N] [--threshold K] "
	                "[--delay-ms D] [--jitter-ms J] [--step-ms T] [--faults] [--loss-permille L] "
	                "[--registrations R] [--health H] [--services S] [--progress E] [--keep]\n");
	return 2;
}

/* The value of option argv[*i] into *out; 0, or -1 for a missing or bad number. */
static int number(int argc, char **argv, int *i, uint64_t *out)
{
	if (*i + 1 >= argc)
		return -1;
	char *end = NULL;
	unsigned long long value = strtoull(argv[++*i], &end, 0);
	if (!end || *end)
		return -1;
	*out = value;
	return 0;
}

int main(int argc, char **argv)
{
	struct simnet_options o;
	uint64_t epochs = 2000, progress = 0, loss = 10, value = 0;
	int faults = 0;
	simnet_options_init(&o);
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "--faults") == 0) {
			faults = 1;
		} else if (strcmp(a, "--keep") == 0) {
			o.keep = 1;
		} else if (number(argc, argv, &i, &value) != 0) {
			return usage();
		} else if (strcmp(a, "--epochs") == 0) {
			epochs = value;
		} else if (strcmp(a, "--seed") == 0) {
			o.seed = value;
		} else if (strcmp(a, "--members") == 0) {
			o.members = (size_t)value;
		} else if (strcmp(a, "--threshold") == 0) {
			o.threshold = (size_t)value;
		} else if (strcmp(a, "--delay-ms") == 0) {
			o.delay_ms = (uint32_t)value;
		} else if (strcmp(a, "--jitter-ms") == 0) {
			o.jitter_ms = (uint32_t)value;
		} else if (strcmp(a, "--step-ms") == 0) {
			o.step_ms = (uint32_t)value;
		} else if (strcmp(a, "--loss-permille") == 0) {
			loss = value;
		} else if (strcmp(a, "--registrations") == 0) {
			o.registrations = (size_t)value;
		} else if (strcmp(a, "--health") == 0) {
			o.health = (size_t)value;
		} else if (strcmp(a, "--services") == 0) {
			o.services = (size_t)value;
		} else if (strcmp(a, "--progress") == 0) {
			progress = value;
		} else {
			return usage();
		}
	}
	if (epochs == 0)
		return usage();

	struct simnet *net = NULL;
	char why[768];
	double started = now_seconds();
	int rc = simnet_create(&o, &net, why, sizeof why);
	if (rc) {
		fprintf(stderr, "bench_simulation: %s (%s)\n", why, dirauth_strerror(rc));
		return 1;
	}
	double created = now_seconds();
	printf("bench_simulation: seed %llu, %zu authorities (k = %zu), %llu-second epochs, %u ms one way "
	       "(+%u ms jitter), steps of %u ms, faults %s, %s\n",
	       (unsigned long long)o.seed, o.members, o.threshold ? o.threshold : o.members / 2 + 1,
	       (unsigned long long)o.epoch_seconds, o.delay_ms, o.jitter_ms, o.step_ms, faults ? "on" : "off",
	       simnet_dir(net));
	printf("  set up (keys, signers, stores) in %.2f s\n", created - started);
	fflush(stdout);
	if (faults) {
		struct simnet_scenario scenario = {.epochs = epochs,
		                                   .loss_permille = (unsigned)loss,
		                                   .partitions = 1,
		                                   .crashes = 1,
		                                   .slow = 1};
		rc = simnet_run_scenario(net, &scenario);
	} else {
		uint64_t chunk = progress ? progress : epochs;
		for (uint64_t done = 0; rc == 0 && done < epochs; done += chunk) {
			rc = simnet_run_epochs(net, done + chunk > epochs ? epochs - done : chunk);
			if (progress) {
				struct simnet_statistics s;
				simnet_statistics_get(net, &s);
				double real = now_seconds() - created;
				printf("  %llu epochs in %.1f s real: %.1f epochs/s, %zu violations\n",
				       (unsigned long long)s.epochs_checked, real,
				       (double)s.epochs_checked / real, simnet_violation_count(net));
				fflush(stdout);
			}
		}
		if (rc == 0)
			simnet_check_converged(net);
	}
	double finished = now_seconds(), real = finished - created;
	struct simnet_statistics s;
	simnet_statistics_get(net, &s);
	double simulated = (double)s.simulated_ms / 1000.0;
	printf("  %llu epochs (%llu published, %llu quiet) in %.2f s real: %.1f simulated epochs per real "
	       "second\n",
	       (unsigned long long)s.epochs_checked, (unsigned long long)s.epochs_published,
	       (unsigned long long)s.epochs_quiet, real, (double)s.epochs_checked / real);
	printf("  simulated time %.0f s (%.1f h) against %.2f s real: %.0f times real time (the anchor)\n",
	       simulated, simulated / 3600.0, real, simulated / real);
	printf("  %llu steps, %llu ticks; %llu peer calls (%llu attempts: %llu lost, %llu timed out, %llu "
	       "refused, "
	       "%llu across a partition), %.1f MB carried\n",
	       (unsigned long long)s.steps, (unsigned long long)s.ticks, (unsigned long long)s.calls,
	       (unsigned long long)s.attempts, (unsigned long long)s.lost, (unsigned long long)s.timeouts,
	       (unsigned long long)s.refused, (unsigned long long)s.partitioned, (double)s.bytes / 1e6);
	printf(
	    "  %llu submissions (%llu accepted), %llu revoked targets listed, %llu crashes, %llu restarts\n",
	    (unsigned long long)s.submissions, (unsigned long long)s.accepted,
	    (unsigned long long)s.revocations_listed, (unsigned long long)s.crashes,
	    (unsigned long long)s.restarts);
	printf("  checked: %llu published bodies against the votes (%llu whose votes were gone first)\n",
	       (unsigned long long)s.bodies_checked, (unsigned long long)s.unchecked_votes);
	size_t violations = simnet_violation_count(net);
	printf("  invariant violations: %zu\n", violations);
	simnet_violations_print(net, stdout);
	if (violations) {
		printf("  replay:");
		for (int i = 0; i < argc; i++)
			printf(" %s", argv[i]);
		printf("%s (the same run: it is a function of its options)\n", o.keep ? "" : " --keep");
	}
	simnet_free(net);
	return rc || violations ? 1 : 0;
}
