package jobview

import (
	"fmt"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/cmd/jobstore/internal/remedy"
)

type ShowJSON struct {
	ID           string              `json:"job_id"`
	Dir          string              `json:"dir"`
	Spec         *jobstore.JobSpec   `json:"spec"`
	Status       *jobstore.JobStatus `json:"status"`
	SpecRecord   RecordInfo          `json:"spec_record"`
	StatusRecord RecordInfo          `json:"status_record"`
	DueJSON
	ShowCancelJSON
}

// NewShowJSON is j as show --json prints it (its cancel request read now).
func NewShowJSON(j JobRecords) ShowJSON {
	out := ShowJSON{ID: j.Dir.ID(), Dir: string(j.Dir), Spec: j.Spec, Status: j.Status,
		SpecRecord: j.SpecInfo, StatusRecord: j.StatusInfo, DueJSON: NewDueJSON(j.Spec, j.Status)}
	out.SpecRecord.ErrJSON = remedy.NewErrorJSON(j.SpecInfo.Err)
	out.StatusRecord.ErrJSON = remedy.NewErrorJSON(j.StatusInfo.Err)
	if c, info := ReadCancel(j.Dir); info.Present || info.Err != nil {
		info.ErrJSON = remedy.NewErrorJSON(info.Err)
		out.Cancel, out.CancelRecord = c, &info
	}
	return out
}

// StatusRows gives row what show prints of st after its state: seq,
// progress (with a bar when bar is set), message, times, runner, exit code,
// error and remedy. The job page of serve shows the same rows.
func StatusRows(st *jobstore.JobStatus, bar bool, row func(name, value string)) {
	row("seq", fmt.Sprint(st.Seq))
	if st.Progress != nil {
		p := FmtProgress(st.Progress)
		if bar {
			p += "  " + ProgressBar(st.Progress)
		}
		row("progress", p)
	}
	if st.Message != "" {
		row("message", st.Message)
	}
	row("updated", FmtTime(st.UpdatedAt))
	if st.StartedAt != nil {
		row("started", FmtTimePtr(st.StartedAt))
	}
	if st.FinishedAt != nil {
		fin := FmtTimePtr(st.FinishedAt)
		if st.StartedAt != nil {
			fin += " (ran " + FmtAge(st.FinishedAt.Sub(*st.StartedAt)) + ")"
		}
		row("finished", fin)
	}
	if st.PID != 0 || st.Host != "" {
		row("runner", fmt.Sprintf("pid %d on %s", st.PID, st.Host))
	}
	if st.ExitCode != nil {
		row("exit code", fmt.Sprint(*st.ExitCode))
	}
	if st.Error != "" {
		row("error", st.Error)
	}
	if st.Remedy != "" {
		row("remedy", st.Remedy)
	}
}

// VersionText says how a record was found: its versions, a migration, or
// why it could not be read.
func VersionText(r RecordInfo) string {
	switch {
	case !r.Present && r.Err == nil && r.File == jobstore.StatusFile:
		return "absent: nothing has run yet"
	case r.Err != nil:
		subject, what, _ := remedy.Problem(r.Err, r.File)
		if subject != r.File {
			what = subject + ": " + what
		}
		return "unreadable: " + what
	case r.Migrated:
		return fmt.Sprintf("schema_version %d, migrated to %d in memory (the file is unchanged)", *r.Written, r.Current)
	case r.Written != nil:
		return fmt.Sprintf("schema_version %d (current)", *r.Written) // version 1 is current for a record that needs no more
	default:
		return fmt.Sprintf("schema_version %d (current)", r.Current)
	}
}
