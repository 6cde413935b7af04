// kerf-oidc-provider: a real OpenID Connect provider for kerf's tests, built on the
// zitadel/oidc op library with an in-memory store and a JSON control API.
//
//	kerf-oidc-provider --listen 127.0.0.1:0 --ready-file PATH
//
// Once listening it writes its base URL (the issuer, e.g. http://127.0.0.1:41234) to
// the ready file (atomically: a temp file renamed) and prints it as its first stdout
// line. It stops cleanly on SIGTERM or SIGINT.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "address to listen on")
	readyFile := flag.String("ready-file", "", "file to write the base URL to once listening")
	flag.Parse()
	slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, nil)))
	if err := run(*listen, *readyFile); err != nil {
		fmt.Fprintln(os.Stderr, "kerf-oidc-provider:", err)
		os.Exit(1)
	}
}

func run(listen, readyFile string) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()

	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return err
	}
	issuer := "http://" + ln.Addr().String()
	handler, err := newHandler(issuer)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()

	if readyFile != "" {
		if err := writeAtomically(readyFile, issuer+"\n"); err != nil {
			return fmt.Errorf("ready file: %w", err)
		}
	}
	fmt.Println(issuer)
	slog.Info("listening", "issuer", issuer)

	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	slog.Info("stopping")
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil {
		return err
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// writeAtomically writes a temp file beside path and renames it over path, so a
// reader sees either nothing or the whole content.
func writeAtomically(path, content string) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	_, werr := tmp.WriteString(content)
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		_ = os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), path)
}
