package main

import "syscall"

// dieWithWorker makes the kernel send the command SIGKILL when the worker
// dies (killed, crashed), so that a job a reconciler marks lost is not
// still being worked on by an orphan. Only the command itself gets it, not
// processes it started. The signal follows the thread that started the
// command; Go ends a thread only when a goroutine locked to it exits, which
// the worker never does.
func dieWithWorker(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
