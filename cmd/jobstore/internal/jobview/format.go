package jobview

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
)

// FmtTime prints a timestamp in UTC to the second: 2026-11-30T09:35:40Z.
func FmtTime(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

func FmtTimePtr(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return FmtTime(*t)
}

// FmtAge prints a duration in at most two units: 850ms, 3.2s, 42s, 5m12s,
// 3h05m, 2d03h.
func FmtAge(d time.Duration) string {
	switch {
	case d < 0:
		return "-" + FmtAge(-d)
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	case d < 10*time.Second:
		return fmt.Sprintf("%.1fs", d.Seconds())
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	case d < 24*time.Hour:
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	default:
		return fmt.Sprintf("%dd%02dh", int(d.Hours())/24, int(d.Hours())%24)
	}
}

// FmtProgress prints a fraction as a percentage, "-" when unknown.
func FmtProgress(p *float64) string {
	if p == nil {
		return "-"
	}
	return fmt.Sprintf("%d%%", int(*p*100+1e-9))
}

// BarWidth is the number of cells of the progress bar.
const BarWidth = 20

// ProgressBar draws p as [#####---------------]; an unknown progress (nil)
// as an empty bar that says so, [      unknown       ].
func ProgressBar(p *float64) string { return ProgressBarN(p, BarWidth) }

// ProgressBarN is ProgressBar with width cells.
func ProgressBarN(p *float64, width int) string {
	if p == nil {
		word := "unknown"
		if width < len(word) {
			word = "?"
		}
		if width < len(word) {
			return "[" + strings.Repeat(" ", width) + "]"
		}
		left := (width - len(word)) / 2
		return "[" + strings.Repeat(" ", left) + word + strings.Repeat(" ", width-len(word)-left) + "]"
	}
	n := int(*p*float64(width) + 1e-9)
	n = min(max(n, 0), width)
	return "[" + strings.Repeat("#", n) + strings.Repeat("-", width-n) + "]"
}

// WriteJSON prints v as indented JSON, without HTML escaping (as the
// records themselves are written).
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// SortedKeys returns m's keys in order.
func SortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
