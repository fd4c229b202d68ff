// Command floor is the Go floor of `make bench`: the smallest daemon a Go
// program can be, one net/http route (GET /readyz answering 200 "ok"),
// built the way agnx-lite is (CGO_ENABLED=0, -trimpath, -ldflags "-s -w").
// bench/report starts it with agnx-lite's own arguments
// (`serve --host 127.0.0.1 -p PORT`) and times and samples it with the
// same code, so its ready time, idle memory and arm64 size are the floor
// agnx-lite's figures are judged against. It exits on SIGTERM or SIGINT.
package main

import (
	"context"
	"flag"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"syscall"
)

func main() {
	args := os.Args[1:]
	if len(args) > 0 && args[0] == "serve" {
		args = args[1:] // agnx-lite's subcommand: accepted so one start command fits both
	}
	fs := flag.NewFlagSet("floor", flag.ExitOnError)
	host := fs.String("host", "127.0.0.1", "the address to listen on")
	port := fs.Int("p", 8080, "the port to listen on")
	fs.Parse(args)

	mux := http.NewServeMux()
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		w.Write([]byte("ok"))
	})
	srv := &http.Server{Addr: net.JoinHostPort(*host, strconv.Itoa(*port)), Handler: mux}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	go func() {
		<-ctx.Done()
		srv.Shutdown(context.Background())
	}()
	if err := srv.ListenAndServe(); err != http.ErrServerClosed {
		log.Fatal(err)
	}
}
