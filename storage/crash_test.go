package storage

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/ci/testenv"
)

const (
	crashEnvDB   = "AGNX_STORAGE_CRASH_DB"
	crashEnvSeed = "AGNX_STORAGE_CRASH_SEED"
)

// crashEvent is event seq's payload: its size varies so that some events
// span overflow pages.
func crashEvent(seq uint64) []byte {
	n := int(seq*7919) % 6000
	return append([]byte(fmt.Sprintf(`{"seq":%d,"pad":"`, seq)), bytes.Repeat([]byte{'x'}, n)...)
}

// TestCrashHelper is the child of TestCrash_AckedEventsSurviveKill: it
// appends batches until killed and prints "ack <last seq>" after each
// Update returns, that is once the batch is acknowledged.
func TestCrashHelper(t *testing.T) {
	path := os.Getenv(crashEnvDB)
	if path == "" {
		t.Skip("only run as a child of TestCrash_AckedEventsSurviveKill")
	}
	seed, _ := strconv.ParseUint(os.Getenv(crashEnvSeed), 10, 64)
	rng := rand.New(rand.NewPCG(seed, 1))
	s, err := Open(path, &Options{LockTimeout: 5 * time.Second})
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(2)
	}
	var last uint64
	err = s.Update(func(tx *Tx) error {
		if err := tx.CreateSession("crash", nil); err != nil && !errors.Is(err, ErrSessionExists) {
			return err
		}
		last, err = tx.LastSeq("crash")
		return err
	})
	for i := 0; err == nil && i < 10_000; i++ {
		n := 1 + rng.Uint64N(16)
		err = s.Update(func(tx *Tx) error {
			if err := appendCrashBatch(tx, last+1, last+n); err != nil {
				return err
			}
			if rng.IntN(4) == 0 {
				return tx.PutCheckpoint("crash", last+n, []byte("state"))
			}
			return nil
		})
		if err == nil {
			last += n
			fmt.Printf("ack %d\n", last) // os.Stdout is unbuffered
		}
	}
	fmt.Println("error:", err)
	os.Exit(3)
}

func appendCrashBatch(tx *Tx, from, to uint64) error {
	for seq := from; seq <= to; seq++ {
		if err := tx.AppendEvent("crash", seq, crashEvent(seq)); err != nil {
			return err
		}
	}
	return nil
}

// TestCrash_AckedEventsSurviveKill kills a writer with SIGKILL at random
// points, over and over on the same file, and checks after each kill that
// every acknowledged event is there, intact and contiguous.
func TestCrash_AckedEventsSurviveKill(t *testing.T) {
	if testing.Short() {
		t.Skip("re-execs the test binary 50 times")
	}
	testenv.SkipIfNoReexec(t, "re-executes the test binary as the child it kills")
	path := filepath.Join(t.TempDir(), "agnx.db")
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 2))
	var acked uint64
	start := time.Now()
	for round := 0; round < 50; round++ {
		killAfter := 1 + rng.IntN(25)
		got := runAndKill(t, path, rng.Uint64(), killAfter)
		require.GreaterOrEqual(t, got, acked, "acks go forward across rounds")
		acked = got
		verifyCrashLog(t, path, acked)
	}
	t.Logf("50 kills in %v, %d events acked", time.Since(start).Round(time.Millisecond), acked)
}

// runAndKill starts the child, waits for killAfter acks, SIGKILLs it and
// returns the highest acked seq.
func runAndKill(t *testing.T, path string, seed uint64, killAfter int) uint64 {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashHelper$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashEnvDB+"="+path, crashEnvSeed+"="+strconv.FormatUint(seed, 10))
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())

	var acked uint64
	sc := bufio.NewScanner(out)
	for n := 0; n < killAfter && sc.Scan(); {
		line := sc.Text()
		v, ok := strings.CutPrefix(line, "ack ")
		if !ok {
			continue // the testing package's own lines
		}
		acked, err = strconv.ParseUint(v, 10, 64)
		require.NoError(t, err, line)
		n++
	}
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	// Acks printed before the kill landed count too.
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "ack "); ok {
			acked, _ = strconv.ParseUint(v, 10, 64)
		} else {
			t.Logf("child: %s", sc.Text())
		}
	}
	err = cmd.Wait()
	require.Error(t, err, "the child must die by the kill, not exit")
	require.NotZero(t, acked, "the child acknowledged nothing")
	return acked
}

func verifyCrashLog(t *testing.T, path string, acked uint64) {
	t.Helper()
	s, err := Open(path, &Options{LockTimeout: 5 * time.Second})
	require.NoError(t, err)
	defer func() { require.NoError(t, s.Close()) }()
	require.NoError(t, s.View(func(tx *Tx) error {
		last, err := tx.LastSeq("crash")
		require.NoError(t, err)
		require.GreaterOrEqual(t, last, acked, "acked events lost")
		want := uint64(1)
		err = tx.Events("crash", 0, func(seq uint64, data []byte) error {
			if seq != want || !bytes.Equal(data, crashEvent(seq)) {
				return fmt.Errorf("event %d: want seq %d with its payload", seq, want)
			}
			want++
			return nil
		})
		require.NoError(t, err)
		assert.Equal(t, last+1, want, "log ends at LastSeq")
		cp, _, err := tx.LatestCheckpoint("crash")
		assert.LessOrEqual(t, cp, last)
		return err
	}))
}
