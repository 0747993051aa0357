package observe_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/observe"
)

// roomyDisk is a filesystem of 100 GiB, half free.
type roomyDisk struct{}

func (roomyDisk) Space(string) (hikoutei.DiskSpace, error) {
	return hikoutei.DiskSpace{Free: 50 << 30, Total: 100 << 30}, nil
}

// Mount the store's metrics and health next to the application's own.
func Example() {
	dir, err := os.MkdirTemp("", "observe-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	m := observe.New()
	// A disk with room, so that the health below does not depend on this machine's.
	opts := hikoutei.Options{Observer: m, Logger: quietLogger(), DiskProbe: roomyDisk{}}
	s, err := hikoutei.Open(context.Background(), dir, opts, hikoutei.Entity[airport]("Airport"))
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	m.Watch(s)
	reg := prometheus.NewRegistry()
	reg.MustRegister(m)
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	mux.Handle("/healthz", observe.HealthHandler(s))

	u := s.Begin()
	u.Persist(&airport{ID: "LAX", Name: "Los Angeles"})
	if _, err := u.Commit(context.Background()); err != nil {
		log.Fatal(err)
	}
	for _, path := range []string{"/metrics", "/healthz"} {
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		for _, line := range strings.Split(rec.Body.String(), "\n") {
			if strings.HasPrefix(line, "hikoutei_commits_total ") || strings.HasPrefix(line, "hikoutei_commit_duration_seconds_count ") ||
				strings.HasPrefix(line, "{") {
				fmt.Println(rec.Code, line)
			}
		}
	}
	// Output:
	// 200 hikoutei_commit_duration_seconds_count 1
	// 200 hikoutei_commits_total 1
	// 200 {"status":"ok","local":"ok","sync":"ok","mirror":"ok"}
}
