/*
 * faults.h: named pause points, so that tests can kill a real process at an exact step.
 *
 * A crash test must show that SIGKILL at any step of a multi-step operation (publishing an
 * epoch: sealed, writing the body, signed, stored) leaves a state from which the next start keeps
 * every promise. Killing at a random moment rarely hits a given step; so the steps are named, and
 * when the environment variable DIRAUTH_PAUSE_AT names one, the process writes the log line
 * "<time> epoch - dirauth: paused at <name>" (logline.h) to standard error and sleeps there
 * (DIRAUTH_PAUSE_MS milliseconds, default 10000) while the test kills it. With the variable
 * unset, a point costs one comparison of a cached pointer.
 */
#ifndef DIRAUTH_FAULTS_FAULTS_H
#define DIRAUTH_FAULTS_FAULTS_H

/* Pauses here if DIRAUTH_PAUSE_AT equals name (read once, at the first call). Never fails. */
void fault_point(const char *name);

#endif
