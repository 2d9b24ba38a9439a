package main

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"unsafe"

	"golang.org/x/sys/windows"
)

// jobProcess is a job's command on Windows, where there are no process
// groups to signal: the command is started in a new process group (so the
// console's Ctrl-C reaches the worker alone) and put in a job object that
// ends every process in it when the worker closes it or dies.
type jobProcess struct {
	cmd *exec.Cmd
	job windows.Handle // 0 if the job object could not be made
}

func newJobProcess(cmd *exec.Cmd) *jobProcess {
	cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: windows.CREATE_NEW_PROCESS_GROUP}
	return &jobProcess{cmd: cmd}
}

// started puts the command in a job object that kills it, and what it
// started since, when the handle is closed (by release, or by Windows when
// the worker dies). Processes the command started before this call are
// not in the job.
func (p *jobProcess) started() error {
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return fmt.Errorf("create job object: %w", err)
	}
	info := windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION{
		BasicLimitInformation: windows.JOBOBJECT_BASIC_LIMIT_INFORMATION{LimitFlags: windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE},
	}
	if _, err := windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		windows.CloseHandle(job)
		return fmt.Errorf("set job object limits: %w", err)
	}
	h, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE, false, uint32(p.cmd.Process.Pid))
	if err != nil {
		windows.CloseHandle(job)
		return fmt.Errorf("open the command's process: %w", err)
	}
	defer windows.CloseHandle(h)
	if err := windows.AssignProcessToJobObject(job, h); err != nil {
		windows.CloseHandle(job)
		return fmt.Errorf("assign the command to a job object: %w", err)
	}
	p.job = job
	return nil
}

// terminate asks the command to stop: CTRL_BREAK_EVENT to its process
// group. It reaches a console program that shares the worker's console
// (its default handler ends the process; Python calls its SIGBREAK
// handler); a program without one is ended after the grace by kill.
func (p *jobProcess) terminate() error {
	return windows.GenerateConsoleCtrlEvent(windows.CTRL_BREAK_EVENT, uint32(p.cmd.Process.Pid))
}

// kill ends the command and every process in its job object.
func (p *jobProcess) kill() error {
	if p.job != 0 {
		if err := windows.TerminateJobObject(p.job, 1); err == nil {
			return nil
		}
	}
	return p.cmd.Process.Kill()
}

// release closes the job object, which ends the processes the command
// started and left running.
func (p *jobProcess) release() {
	if p.job != 0 {
		windows.CloseHandle(p.job)
		p.job = 0
	}
}

// stopName and killName are how the stop and the kill after the grace are
// named in messages.
const (
	stopName = "CTRL_BREAK_EVENT"
	killName = "TerminateJobObject"
)

// exitOf is how a command that ran ended: its exit code, no signal
// (Windows has none; a process ended by kill exits with 1), and a
// description.
func exitOf(ps *os.ProcessState) (code int, signal, how string) {
	code = ps.ExitCode()
	return code, "", fmt.Sprintf("exited with status %d", code)
}
