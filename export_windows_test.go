package jobstore

// ReplaceBudget lets the Windows tests hold a file open for longer than a
// replace waits by default, without copying the constant.
const ReplaceBudget = DefaultReplaceTimeout
