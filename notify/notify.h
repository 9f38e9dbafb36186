/*
 * notify.h: telling the service manager where a daemon is in its life, with systemd's
 * notification protocol (sd_notify(3): a datagram of "KEY=VALUE" lines to the socket named by
 * $NOTIFY_SOCKET), so that a unit of Type=notify starts the units after it only once dirauthd or
 * dirauth-signer serves, and knows when it stops.
 *
 * The protocol is one datagram on a UNIX socket, so it is spoken here directly rather than by
 * linking libsystemd: an absolute path, or a name in the abstract namespace written with a
 * leading '@'. Without $NOTIFY_SOCKET (a daemon not started by systemd, a test) nothing is sent
 * and nothing fails. The daemons send READY=1 once they serve (their socket listening, their
 * threads started) and STOPPING=1 when a stop signal arrived, each with STATUS= in words. Around
 * a reload of its configuration (SIGHUP, a unit's ExecReload) dirauthd sends RELOADING=1 with
 * MONOTONIC_USEC= (notify_reloading) before it reads the file, and READY=1 once it is done,
 * whether the new configuration was applied or refused: systemd (Type=notify-reload, or
 * "systemctl reload" of a Type=notify unit) waits for that READY=1.
 */
#ifndef DIRAUTH_NOTIFY_NOTIFY_H
#define DIRAUTH_NOTIFY_NOTIFY_H

/* The longest message sent: a few lines. */
#define NOTIFY_MESSAGE_MAX 512

/* Sends state (newline-separated assignments, e.g. "READY=1\nSTATUS=serving") to the socket of
 * $NOTIFY_SOCKET. Returns 0 when sent or when the variable is unset or empty; DIRAUTH_ERR_CONFIG
 * when it names no usable socket (not absolute nor '@', too long); DIRAUTH_ERR_BOUNDS for a
 * message over NOTIFY_MESSAGE_MAX; DIRAUTH_ERR_IO when the datagram cannot be sent. A caller
 * logs a failure and goes on: the service runs whether or not its manager heard. */
int notify_send(const char *state);

/* Sends "RELOADING=1\nMONOTONIC_USEC=<now>\nSTATUS=<status>", now being CLOCK_MONOTONIC in
 * microseconds, as systemd requires of a reload's start (it matches the time against the
 * reload it asked for). Returns as notify_send; status is at most a few words. */
int notify_reloading(const char *status);

#endif
