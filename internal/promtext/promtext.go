// Package promtext reads figures out of Prometheus text exposition, for the tests and the
// benchmark that scrape `sync --watch`.
package promtext

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// Sum adds up the samples of metric name whose label set contains every one of labels (each
// written as in the exposition, e.g. `cluster="member1"`). found reports whether any matched.
func Sum(r io.Reader, name string, labels ...string) (sum float64, found bool, err error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		line := sc.Text()
		rest, ok := strings.CutPrefix(line, name)
		if !ok || (rest != "" && rest[0] != ' ' && rest[0] != '{') {
			continue
		}
		var set string
		if strings.HasPrefix(rest, "{") {
			end := strings.LastIndex(rest, "}")
			if end < 0 {
				return 0, false, fmt.Errorf("bad sample %q", line)
			}
			set, rest = rest[1:end], rest[end+1:]
		}
		if !hasAll(set, labels) {
			continue
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			return 0, false, fmt.Errorf("bad sample %q", line)
		}
		v, err := strconv.ParseFloat(f[0], 64)
		if err != nil {
			return 0, false, fmt.Errorf("bad sample %q: %w", line, err)
		}
		sum, found = sum+v, true
	}
	return sum, found, sc.Err()
}

func hasAll(set string, labels []string) bool {
	have := strings.Split(set, ",")
	for _, l := range labels {
		ok := false
		for _, h := range have {
			if h == l {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

// Scrape fetches url and sums metric name as Sum does.
func Scrape(url, name string, labels ...string) (float64, bool, error) {
	resp, err := http.Get(url)
	if err != nil {
		return 0, false, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, false, fmt.Errorf("%s: %s", url, resp.Status)
	}
	return Sum(resp.Body, name, labels...)
}
