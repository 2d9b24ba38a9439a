package main

// commands lists the subcommands in the order "jobstore help" shows them.
func commands() []*command {
	return []*command{demoCmd(), submitCmd(), listCmd(), showCmd(), watchCmd(), waitCmd(), cancelCmd(), retryCmd(), workCmd(), logsCmd(), reconcileCmd(), checkCmd(), rmCmd(), pruneCmd(), serveCmd(), completionCmd()}
}

// findCommand is the subcommand called name, nil if none is.
func findCommand(name string) *command {
	for _, c := range commands() {
		if c.name == name {
			return c
		}
	}
	return nil
}
