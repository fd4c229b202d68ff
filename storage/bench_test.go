package storage

import (
	"bytes"
	"fmt"
	"path/filepath"
	"testing"
)

// benchEvent is about the size of a JSON user or assistant message.
var benchEvent = bytes.Repeat([]byte(`{"type":"assistant_message","text":"lorem ipsum"}`), 6)

// BenchmarkAppend measures one Update (one fsync) per op, with batch
// events in it: the runtime's group commit. nosync shows the CPU part.
func BenchmarkAppend(b *testing.B) {
	for _, mode := range []string{"fsync", "nosync"} {
		for _, batch := range []int{1, 16, 128} {
			b.Run(fmt.Sprintf("%s/batch=%d", mode, batch), func(b *testing.B) {
				benchAppend(b, batch, mode == "nosync")
			})
		}
	}
}

func benchAppend(b *testing.B, batch int, noSync bool) {
	s := mustOpenAt(b, filepath.Join(b.TempDir(), "agnx.db"), &Options{NoSync: noSync})
	if err := s.Update(func(tx *Tx) error { return tx.CreateSession("bench", nil) }); err != nil {
		b.Fatal(err)
	}
	var seq uint64
	b.ReportAllocs()
	b.SetBytes(int64(batch * len(benchEvent)))
	for b.Loop() {
		err := s.Update(func(tx *Tx) error {
			for range batch {
				seq++
				if err := tx.AppendEvent("bench", seq, benchEvent); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*batch), "ns/event")
}

// BenchmarkRecovery10k measures what a restart does per session: the
// latest checkpoint plus the 50 events after it, in a 10,000-event log.
// "open" adds Open and Close of the file (freelist rebuild included).
func BenchmarkRecovery10k(b *testing.B) {
	path := filepath.Join(b.TempDir(), "agnx.db")
	s, err := Open(path, &Options{NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	err = s.Update(func(tx *Tx) error {
		if err := tx.CreateSession("long", nil); err != nil {
			return err
		}
		for seq := uint64(1); seq <= 10_000; seq++ {
			if err := tx.AppendEvent("long", seq, benchEvent); err != nil {
				return err
			}
		}
		return tx.PutCheckpoint("long", 9_950, bytes.Repeat([]byte("s"), 4096))
	})
	if err != nil {
		b.Fatal(err)
	}
	recover := func(s *Store) {
		err := s.View(func(tx *Tx) error {
			seq, _, err := tx.LatestCheckpoint("long")
			if err != nil {
				return err
			}
			n := 0
			err = tx.Events("long", seq, func(uint64, []byte) error { n++; return nil })
			if n != 50 {
				return fmt.Errorf("tail of %d events", n)
			}
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.Run("view", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			recover(s)
		}
	})
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
	b.Run("open", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			s, err := Open(path, nil)
			if err != nil {
				b.Fatal(err)
			}
			recover(s)
			if err := s.Close(); err != nil {
				b.Fatal(err)
			}
		}
	})
}
