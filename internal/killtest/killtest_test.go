package killtest

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// fatalRecorder is a testing.TB whose Fatal and Fatalf record the failure
// and end the goroutine, as the real ones do, without failing the test.
type fatalRecorder struct {
	testing.TB
	failure string
}

func (r *fatalRecorder) Helper() {}

func (r *fatalRecorder) Fatal(args ...any) {
	r.failure = fmt.Sprint(args...)
	runtime.Goexit()
}

func (r *fatalRecorder) Fatalf(format string, args ...any) {
	r.failure = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// run runs round r against a recorder and returns its result and the
// failure it reported ("" if none).
func run(t *testing.T, r Round) (Result, string) {
	rec := &fatalRecorder{TB: t}
	var res Result
	done := make(chan struct{})
	go func() {
		defer close(done)
		res = r.Run(rec)
	}()
	<-done
	return res, rec.failure
}

// child is a round of TestChild doing what behaviour says.
func child(behaviour string) Round {
	return Round{Test: "TestChild", Env: []string{"KILLTEST_CHILD=" + behaviour}}
}

func TestRunKillsAfterLife(t *testing.T) {
	r := child("ack-forever")
	r.Life = 100 * time.Millisecond
	res, failure := run(t, r)
	require.Empty(t, failure)
	require.NotEmpty(t, res.Acks)
	for i, id := range res.Acks {
		require.Equal(t, i+1, id)
	}
}

// TestRunLifeFromFirstAck: Life counts from the first acknowledgement,
// which comes late; a child that never acknowledges makes no progress.
func TestRunLifeFromFirstAck(t *testing.T) {
	r := child("late-ack-forever")
	r.Life = 50 * time.Millisecond
	r.LifeFromFirstAck = true
	start := time.Now()
	res, failure := run(t, r)
	require.Empty(t, failure)
	require.NotEmpty(t, res.Acks)
	require.GreaterOrEqual(t, time.Since(start), 250*time.Millisecond, "killed only after the first acknowledgement and its life")

	r = child("silent")
	r.LifeFromFirstAck = true
	r.NoProgress = 300 * time.Millisecond
	_, failure = run(t, r)
	require.Contains(t, failure, "no progress")
}

func TestRunFailsWhenTheChildExits(t *testing.T) {
	r := child("ack-then-exit")
	r.Life = 10 * time.Second
	_, failure := run(t, r)
	require.Contains(t, failure, "ended by itself")
	require.Contains(t, failure, "exit status 1")
	require.Contains(t, failure, "FAIL injected") // the child's output
}

func TestRunFailsWithoutProgress(t *testing.T) {
	r := child("silent")
	r.Life = 10 * time.Millisecond
	r.AtLeastOneAck = true
	r.NoProgress = 300 * time.Millisecond
	_, failure := run(t, r)
	require.Contains(t, failure, "no progress")

	// Without AtLeastOneAck, a silent child is killed when its life ends.
	r.AtLeastOneAck = false
	res, failure := run(t, r)
	require.Empty(t, failure)
	require.Empty(t, res.Acks)
}

func TestRunKillOn(t *testing.T) {
	r := child("ack-then-gap")
	r.KillOn = func(line string) bool { return strings.HasPrefix(line, "GAP") }
	r.NoProgress = 10 * time.Second
	res, failure := run(t, r)
	require.Empty(t, failure)
	require.True(t, res.Matched)
	require.Equal(t, []int{1, 2, 3}, res.Acks)

	// A child that never reaches the line: no progress.
	r = child("ack-forever")
	r.KillOn = func(line string) bool { return strings.HasPrefix(line, "GAP") }
	r.NoProgress = 300 * time.Millisecond
	_, failure = run(t, r)
	require.Contains(t, failure, "no progress")
}

// TestRunCommandStartAndStderr: a child given as a command, whose
// standard error lines reach KillOn, killed Life after the parent closes
// Start; a Start never closed makes no progress.
func TestRunCommandStartAndStderr(t *testing.T) {
	start := make(chan struct{})
	var saw []string
	r := Round{
		Command: []string{os.Args[0], "-test.run=^TestChild$"},
		Env:     []string{"KILLTEST_CHILD=stderr-forever"},
		Stderr:  true,
		Start:   start,
		Life:    50 * time.Millisecond,
		KillOn: func(line string) bool {
			saw = append(saw, line)
			if line == "READY" {
				close(start)
			}
			return false
		},
	}
	begun := time.Now()
	_, failure := run(t, r)
	require.Empty(t, failure)
	require.Contains(t, saw, "READY", "a line of standard error")
	require.GreaterOrEqual(t, time.Since(begun), 200*time.Millisecond, "killed only after Start and its life")

	r.Start = make(chan struct{})
	r.KillOn = nil
	r.NoProgress = 300 * time.Millisecond
	_, failure = run(t, r)
	require.Contains(t, failure, "no progress")
	require.Contains(t, failure, "-test.run=^TestChild$", "the command is named")
}

// TestChild is the child of the tests above.
func TestChild(t *testing.T) {
	behaviour := os.Getenv("KILLTEST_CHILD")
	if behaviour == "" {
		t.Skip("only runs as a child")
	}
	switch behaviour {
	case "ack-forever":
		for id := 1; ; id++ {
			fmt.Printf("ACK %d\n", id)
			time.Sleep(time.Millisecond)
		}
	case "late-ack-forever":
		time.Sleep(200 * time.Millisecond)
		for id := 1; ; id++ {
			fmt.Printf("ACK %d\n", id)
			time.Sleep(time.Millisecond)
		}
	case "ack-then-exit":
		fmt.Println("ACK 1")
		fmt.Println("FAIL injected")
		os.Exit(1)
	case "ack-then-gap":
		fmt.Println("ACK 1\nACK 2\nACK 3\nGAP")
	case "stderr-forever":
		time.Sleep(200 * time.Millisecond)
		fmt.Fprintln(os.Stderr, "READY")
	}
	time.Sleep(time.Hour)
}
