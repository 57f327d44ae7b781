/* signals.h — the signals that end a process, finished through a handler
 * of ours that the program never sees (signals.c). */
#ifndef GL_SIGNALS_H
#define GL_SIGNALS_H

/* Take the terminating signals (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT,
 * SIGTERM, SIGINT, SIGHUP, SIGQUIT) that are at their default action now:
 * when one arrives, on_fatal(sig) runs, then the process dies of it as it
 * would have. From here on the program's sigaction, signal, sysv_signal,
 * sigset, sigignore and siginterrupt see and set, for those signals, what
 * they would without gpuledger: a program that installs its own handler
 * gets it installed as it is; one that sets the default again (or never
 * changed it) reads the default and keeps ours underneath. Called once,
 * when recording starts. */
void gl_signals_arm(void (*on_fatal)(int sig));

/* In on_fatal's caller: the signal's default action, for real, before it
 * is raised again. */
void gl_signals_default(int sig);

#endif
