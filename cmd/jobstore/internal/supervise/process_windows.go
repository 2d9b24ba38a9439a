package supervise

import (
	"fmt"
	"os/exec"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"
)

// Process is a job's command on Windows, where there are no process
// groups to signal: the command is started in a new process group (so the
// console's Ctrl-C reaches the worker alone) and put in a job object that
// ends every process in it when the worker closes it or dies.
type Process struct {
	cmd *exec.Cmd
	opt Options
	job windows.Handle // 0 if the job object could not be made
}

// jobPoll is how often the worker looks whether the processes the command
// left in its job object are gone, once it has exited.
const jobPoll = 10 * time.Millisecond

func New(cmd *exec.Cmd, opt Options) *Process {
	return &Process{cmd: cmd, opt: opt}
}

// Start starts the command in a new process group and its job object (a
// failure to make that is a warning: the command runs without it). The
// output is read for OutputWaitDelay after the command exits, then what
// it left in its job object is stopped (Wait).
func (p *Process) Start() error {
	p.cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: windows.CREATE_NEW_PROCESS_GROUP}
	p.cmd.WaitDelay = OutputWaitDelay
	if err := p.cmd.Start(); err != nil {
		return err
	}
	if err := p.started(); err != nil {
		p.opt.Warn("%v; the command runs without it", err)
	}
	return nil
}

// Wait waits for the command, then stops what it left running in its job
// object: CTRL_BREAK_EVENT, then TerminateJobObject after the grace.
func (p *Process) Wait() End {
	err := p.cmd.Wait()
	end := endOf(p.cmd.ProcessState, err)
	n := p.active()
	if n == 0 {
		return end
	}
	_ = p.Terminate()
	deadline := time.Now().Add(p.opt.Grace)
	for p.active() > 0 && time.Now().Before(deadline) {
		time.Sleep(jobPoll)
	}
	still := p.active()
	if still > 0 {
		_ = windows.TerminateJobObject(p.job, 1)
	}
	end.Leftover = leftoverNote(n, still, 0, p.opt.Grace)
	return end
}

// jobAccounting is JOBOBJECT_BASIC_ACCOUNTING_INFORMATION, which
// golang.org/x/sys/windows does not declare.
type jobAccounting struct {
	TotalUserTime, TotalKernelTime                     int64
	ThisPeriodTotalUserTime, ThisPeriodTotalKernelTime int64
	TotalPageFaultCount, TotalProcesses                uint32
	ActiveProcesses, TotalTerminatedProcesses          uint32
}

// active is how many processes are left in the job object.
func (p *Process) active() int {
	if p.job == 0 {
		return 0
	}
	var info jobAccounting
	if err := windows.QueryInformationJobObject(p.job, windows.JobObjectBasicAccountingInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info)), nil); err != nil {
		return 0
	}
	return int(info.ActiveProcesses)
}

// started puts the command in a job object that kills it, and what it
// started since, when the handle is closed (by release, or by Windows when
// the worker dies). Processes the command started before this call are
// not in the job.
func (p *Process) started() error {
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

// Terminate asks the command to stop: CTRL_BREAK_EVENT to its process
// group. It reaches a console program that shares the worker's console
// (its default handler ends the process; Python calls its SIGBREAK
// handler); a program without one is ended after the grace by kill.
func (p *Process) Terminate() error {
	return windows.GenerateConsoleCtrlEvent(windows.CTRL_BREAK_EVENT, uint32(p.cmd.Process.Pid))
}

// Kill ends the command and every process in its job object.
func (p *Process) Kill() error {
	if p.job != 0 {
		if err := windows.TerminateJobObject(p.job, 1); err == nil {
			return nil
		}
	}
	return p.cmd.Process.Kill()
}

// Release closes the job object, which ends the processes the command
// started and left running.
func (p *Process) Release() {
	if p.job != 0 {
		windows.CloseHandle(p.job)
		p.job = 0
	}
}

// StopName and KillName are how the stop and the kill after the grace are
// named in messages.
const (
	StopName = "CTRL_BREAK_EVENT"
	KillName = "TerminateJobObject"
)
