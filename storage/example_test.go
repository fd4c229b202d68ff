package storage_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/agnx-lite/agnx-lite/storage"
)

// The runtime appends a batch of events in one Update (one fsync) and
// acknowledges them once Update returns; recovery reads the latest
// checkpoint and replays the events after it.
func Example_appendEvents() {
	dir, err := os.MkdirTemp("", "agnx-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	s, err := storage.Open(filepath.Join(dir, "agnx.db"), nil)
	if err != nil {
		log.Fatal(err) // one sentence, e.g. "agnx-lite is already running (pid 42) and holds ..."
	}
	defer s.Close()

	batch := []string{`{"type":"user_message","text":"hi"}`, `{"type":"assistant_message","text":"hello"}`}
	err = s.Update(func(tx *storage.Tx) error {
		if err := tx.CreateSession("tg:42", []byte(`{"agent":"helper"}`)); err != nil {
			return err
		}
		last, err := tx.LastSeq("tg:42")
		if err != nil {
			return err
		}
		for _, ev := range batch {
			last++
			if err := tx.AppendEvent("tg:42", last, []byte(ev)); err != nil {
				return err
			}
		}
		// Same transaction: the gateway cursor moves with the message it produced.
		if err := tx.PutKV("telegram/offset", []byte("1001")); err != nil {
			return err
		}
		return tx.PutCheckpoint("tg:42", 1, []byte(`{"turns":0}`))
	})
	if err != nil {
		log.Fatal(err)
	}
	// Acknowledge here: the batch is on disk.

	err = s.View(func(tx *storage.Tx) error {
		seq, state, err := tx.LatestCheckpoint("tg:42")
		if err != nil {
			return err
		}
		fmt.Printf("checkpoint %d: %s\n", seq, state)
		return tx.Events("tg:42", seq, func(seq uint64, data []byte) error {
			fmt.Printf("replay %d: %s\n", seq, data)
			return nil
		})
	})
	if err != nil {
		log.Fatal(err)
	}
	// Output:
	// checkpoint 1: {"turns":0}
	// replay 2: {"type":"assistant_message","text":"hello"}
}
