package main

import (
	"fmt"
	"strconv"
	"strings"
)

// byteSize is a flag holding a byte count: a plain number of bytes, or a
// number with a unit: KB, MB, GB, TB (powers of 1000) or KiB, MiB, GiB, TiB
// (powers of 1024).
type byteSize struct{ p *int64 }

var byteUnits = []struct {
	suffix string
	mult   int64
}{
	{"KIB", 1 << 10}, {"MIB", 1 << 20}, {"GIB", 1 << 30}, {"TIB", 1 << 40},
	{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12}, {"B", 1},
}

func (b byteSize) String() string {
	if b.p == nil || *b.p == 0 {
		return ""
	}
	return strconv.FormatInt(*b.p, 10)
}

func (b byteSize) Set(s string) error {
	n, err := parseByteSize(s)
	if err != nil {
		return err
	}
	*b.p = n
	return nil
}

func parseByteSize(s string) (int64, error) {
	t := strings.ToUpper(strings.TrimSpace(s))
	mult := int64(1)
	for _, u := range byteUnits {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.mult
			break
		}
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil || f <= 0 {
		return 0, fmt.Errorf("%q is not a positive size (a byte count, or a number with KB, MB, GB, KiB, MiB or GiB)", s)
	}
	return int64(f * float64(mult)), nil
}
