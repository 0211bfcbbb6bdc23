package store

import "github.com/gocoll/gocoll/internal/jobkey"

// JobKey is a job's secret (package internal/jobkey): it prints redacted,
// and the store derives from it the keys of its handshake and tags.
type JobKey = jobkey.Key

// ParseJobKey checks a key's text (16 to 1024 printable ASCII bytes, as
// GOCOLL_JOB_KEY holds) and returns the key.
func ParseJobKey(text string) (JobKey, error) { return jobkey.Parse(text) }

// GenerateJobKey returns a fresh random key, as gocoll run makes for each job.
func GenerateJobKey() (JobKey, error) { return jobkey.Generate() }
