package eval

import (
	"fmt"
	"math"
	"math/big"
	"strings"
	"time"
)

// Date and time functions (datetimeadd.md ... timestamptodatetime.md,
// getcurrent*.md). Date-times are strings in the ISO 8601 UTC form
// YYYY-MM-DDThh:mm:ss.fffffffZ; on input the fraction (1 to 7 digits) and
// the Z are optional, as in the documentation's examples
// ("2020-07-03T00:00:00.0000000"), and years run from 0001 to 9999. Output
// always has seven fraction digits and the Z. Ticks are 100-nanosecond
// intervals since the Unix epoch (DateTimeToTicks("2015-05-19T12:00:00")
// is 14320368000000000), timestamps milliseconds since the Unix epoch.
// Anything invalid gives undefined.
var dateFuncs = []*builtin{
	{name: "GetCurrentDateTime", min: 0, max: 0, fn: currentTime(false, func(t int64) Value { return StringValue(formatTicks(t)) })},
	{name: "GetCurrentTimestamp", min: 0, max: 0, fn: currentTime(false, func(t int64) Value { return IntValue(floorDiv(t, ticksPerMs)) })},
	{name: "GetCurrentTicks", min: 0, max: 0, fn: currentTime(false, IntValue)},
	{name: "GetCurrentDateTimeStatic", min: 0, max: 0, fn: currentTime(true, func(t int64) Value { return StringValue(formatTicks(t)) })},
	{name: "GetCurrentTimestampStatic", min: 0, max: 0, fn: currentTime(true, func(t int64) Value { return IntValue(floorDiv(t, ticksPerMs)) })},
	{name: "GetCurrentTicksStatic", min: 0, max: 0, fn: currentTime(true, IntValue)},
	{name: "DateTimeAdd", min: 3, max: 3, fn: fnDateTimeAdd},
	{name: "DateTimeDiff", min: 3, max: 3, fn: fnDateTimeDiff},
	{name: "DateTimePart", min: 2, max: 2, fn: fnDateTimePart},
	{name: "DateTimeFromParts", min: 3, max: 7, fn: fnDateTimeFromParts},
	{name: "DateTimeToTicks", min: 1, max: 1, fn: func(c *callCtx, a []Value) (Value, error) {
		t, ok := dateTimeArg(a[0])
		if !ok {
			return undef, nil
		}
		return IntValue(t), nil
	}},
	{name: "DateTimeToTimestamp", min: 1, max: 1, fn: func(c *callCtx, a []Value) (Value, error) {
		t, ok := dateTimeArg(a[0])
		if !ok {
			return undef, nil
		}
		return IntValue(floorDiv(t, ticksPerMs)), nil
	}},
	{name: "TicksToDateTime", min: 1, max: 1, fn: func(c *callCtx, a []Value) (Value, error) {
		return fromCount(a[0], 1)
	}},
	{name: "TimestampToDateTime", min: 1, max: 1, fn: func(c *callCtx, a []Value) (Value, error) {
		return fromCount(a[0], ticksPerMs)
	}},
	{name: "DateTimeBin", min: 2, max: 4, fn: fnDateTimeBin},
}

const (
	ticksPerUs     = 10
	ticksPerMs     = 10_000
	ticksPerSecond = 10_000_000
	ticksPerMinute = 60 * ticksPerSecond
	ticksPerHour   = 60 * ticksPerMinute
	ticksPerDay    = 24 * ticksPerHour

	// minTicks and maxTicks bound years 0001 to 9999.
	minTicks = -62135596800 * ticksPerSecond
	maxTicks = 253402300800*ticksPerSecond - 1
)

// floorDiv is integer division rounding toward minus infinity.
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// parseDateTime parses YYYY-MM-DDThh:mm:ss[.fffffff][Z] into ticks.
func parseDateTime(s string) (int64, bool) {
	if len(s) < 19 || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':' {
		return 0, false
	}
	num := func(from, to int) (int, bool) {
		n := 0
		for i := from; i < to; i++ {
			if !isDigit(s[i]) {
				return 0, false
			}
			n = n*10 + int(s[i]-'0')
		}
		return n, true
	}
	y, ok1 := num(0, 4)
	mo, ok2 := num(5, 7)
	d, ok3 := num(8, 10)
	h, ok4 := num(11, 13)
	mi, ok5 := num(14, 16)
	sec, ok6 := num(17, 19)
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) {
		return 0, false
	}
	rest := s[19:]
	frac := 0
	if rest != "" && rest[0] == '.' {
		digits := 0
		rest = rest[1:]
		for digits < len(rest) && isDigit(rest[digits]) {
			digits++
		}
		if digits == 0 || digits > 7 {
			return 0, false
		}
		frac, _ = num(len(s)-len(rest), len(s)-len(rest)+digits)
		for i := digits; i < 7; i++ {
			frac *= 10
		}
		rest = rest[digits:]
	}
	if rest != "" && rest != "Z" {
		return 0, false
	}
	return ticksFromParts(int64(y), int64(mo), int64(d), int64(h), int64(mi), int64(sec), int64(frac))
}

// ticksFromParts validates the parts of a date-time and returns its ticks.
func ticksFromParts(y, mo, d, h, mi, s, frac int64) (int64, bool) {
	if y < 1 || y > 9999 || mo < 1 || mo > 12 || d < 1 || d > int64(daysIn(int(y), time.Month(mo))) ||
		h < 0 || h > 23 || mi < 0 || mi > 59 || s < 0 || s > 59 || frac < 0 || frac >= ticksPerSecond {
		return 0, false
	}
	secs := time.Date(int(y), time.Month(mo), int(d), int(h), int(mi), int(s), 0, time.UTC).Unix()
	return secs*ticksPerSecond + frac, true
}

func daysIn(y int, m time.Month) int {
	return time.Date(y, m+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

// civil splits ticks into a UTC time.Time and the 100-ns remainder of its
// second.
func civil(t int64) (time.Time, int64) {
	secs := floorDiv(t, ticksPerSecond)
	return time.Unix(secs, 0).UTC(), t - secs*ticksPerSecond
}

func formatTicks(t int64) string {
	tm, frac := civil(t)
	return fmt.Sprintf("%04d-%02d-%02dT%02d:%02d:%02d.%07dZ",
		tm.Year(), int(tm.Month()), tm.Day(), tm.Hour(), tm.Minute(), tm.Second(), frac)
}

func dateTimeArg(v Value) (int64, bool) {
	if v.kind != String {
		return 0, false
	}
	return parseDateTime(v.s)
}

// A dateTimePart is a unit of DateTimeAdd, DateTimeDiff, DateTimePart and
// DateTimeBin.
type dateTimePart uint8

const (
	partYear dateTimePart = iota
	partMonth
	partDay
	partHour
	partMinute
	partSecond
	partMillisecond
	partMicrosecond
	partNanosecond
)

// parsePart reads a part name: year, yyyy, yy; month, mm, m; day, dd, d;
// hour, hh; minute, mi, n; second, ss, s; millisecond, ms; microsecond,
// mcs; nanosecond, ns (datetimeadd.md). Case does not matter.
func parsePart(v Value) (dateTimePart, bool) {
	if v.kind != String {
		return 0, false
	}
	switch strings.ToLower(v.s) {
	case "year", "yyyy", "yy":
		return partYear, true
	case "month", "mm", "m":
		return partMonth, true
	case "day", "dd", "d":
		return partDay, true
	case "hour", "hh":
		return partHour, true
	case "minute", "mi", "n":
		return partMinute, true
	case "second", "ss", "s":
		return partSecond, true
	case "millisecond", "ms":
		return partMillisecond, true
	case "microsecond", "mcs":
		return partMicrosecond, true
	case "nanosecond", "ns":
		return partNanosecond, true
	}
	return 0, false
}

// partTicks is the length in ticks of the fixed-length parts (day and
// shorter; 0 for nanoseconds, which are shorter than a tick).
var partTicks = [...]int64{
	partDay: ticksPerDay, partHour: ticksPerHour, partMinute: ticksPerMinute,
	partSecond: ticksPerSecond, partMillisecond: ticksPerMs, partMicrosecond: ticksPerUs,
}

func currentTime(static bool, conv func(int64) Value) func(*callCtx, []Value) (Value, error) {
	return func(c *callCtx, a []Value) (Value, error) {
		var now time.Time
		switch {
		case static && !c.env.QueryStart.IsZero():
			now = c.env.QueryStart
		case c.env.Now != nil:
			now = c.env.Now()
		default:
			return undef, errorf(c.node.At, ErrMissingEnv, "%s needs Env.Now", c.node.Name)
		}
		t := now.Unix()*ticksPerSecond + int64(now.Nanosecond())/100
		return conv(t), nil
	}
}

// addMonths adds n months to t, keeping the time of day and clamping the
// day to the end of a shorter month (2020-01-31 plus one month is
// 2020-02-29), as .NET's AddMonths and SQL's DATEADD do.
func addMonths(t int64, n int64) (int64, bool) {
	tm, frac := civil(t)
	total := int64(tm.Year())*12 + int64(tm.Month()) - 1 + n
	if total < 12 || total >= 10000*12 {
		return 0, false
	}
	y, m := total/12, time.Month(total%12+1)
	d := min(tm.Day(), daysIn(int(y), m))
	return ticksFromParts(y, int64(m), int64(d), int64(tm.Hour()), int64(tm.Minute()), int64(tm.Second()), frac)
}

func fnDateTimeAdd(c *callCtx, a []Value) (Value, error) {
	part, ok1 := parsePart(a[0])
	n, ok2 := a[1].AsInt()
	t, ok3 := dateTimeArg(a[2])
	if !ok1 || !ok2 || !ok3 {
		return undef, nil
	}
	var r int64
	var ok bool
	switch part {
	case partYear:
		if n > 10000 || n < -10000 {
			return undef, nil
		}
		r, ok = addMonths(t, n*12)
	case partMonth:
		if n > 120000 || n < -120000 {
			return undef, nil
		}
		r, ok = addMonths(t, n)
	case partNanosecond:
		r, ok = t+n/100, true
	default:
		d, fits := mulInt64(n, partTicks[part])
		if !fits || d > maxTicks-minTicks || d < minTicks-maxTicks {
			return undef, nil
		}
		r, ok = t+d, true // cannot overflow: both terms are bounded
	}
	if !ok || r < minTicks || r > maxTicks {
		return undef, nil
	}
	return StringValue(formatTicks(r)), nil
}

// fnDateTimeDiff counts the boundaries of the part crossed from start to
// end, not the length of the interval (datetimediff.md): from
// 2018-03-05T05:00 to 2019-02-04T16:00 is 1 year, 11 months, 336 days,
// 8075 hours.
func fnDateTimeDiff(c *callCtx, a []Value) (Value, error) {
	part, ok1 := parsePart(a[0])
	s, ok2 := dateTimeArg(a[1])
	e, ok3 := dateTimeArg(a[2])
	if !ok1 || !ok2 || !ok3 {
		return undef, nil
	}
	switch part {
	case partYear, partMonth:
		st, _ := civil(s)
		et, _ := civil(e)
		if part == partYear {
			return IntValue(int64(et.Year() - st.Year())), nil
		}
		return IntValue(int64((et.Year()-st.Year())*12 + int(et.Month()) - int(st.Month()))), nil
	case partNanosecond:
		return IntValue((e - s) * 100), nil
	}
	unit := partTicks[part]
	return IntValue(floorDiv(e, unit) - floorDiv(s, unit)), nil
}

func fnDateTimePart(c *callCtx, a []Value) (Value, error) {
	part, ok1 := parsePart(a[0])
	t, ok2 := dateTimeArg(a[1])
	if !ok1 || !ok2 {
		return undef, nil
	}
	tm, frac := civil(t)
	var r int64
	switch part {
	case partYear:
		r = int64(tm.Year())
	case partMonth:
		r = int64(tm.Month())
	case partDay:
		r = int64(tm.Day())
	case partHour:
		r = int64(tm.Hour())
	case partMinute:
		r = int64(tm.Minute())
	case partSecond:
		r = int64(tm.Second())
	case partMillisecond:
		r = frac / ticksPerMs
	case partMicrosecond:
		r = frac / ticksPerUs
	case partNanosecond:
		r = frac * 100
	}
	return IntValue(r), nil
}

// fnDateTimeFromParts is DateTimeFromParts(year, month, day [, hour [,
// minute [, second [, fraction]]]]), the fraction in 100-ns units
// (3456789 → .3456789); every part an integer in range.
func fnDateTimeFromParts(c *callCtx, a []Value) (Value, error) {
	var p [7]int64
	for i, v := range a {
		n, ok := v.AsInt()
		if !ok {
			return undef, nil
		}
		p[i] = n
	}
	t, ok := ticksFromParts(p[0], p[1], p[2], p[3], p[4], p[5], p[6])
	if !ok {
		return undef, nil
	}
	return StringValue(formatTicks(t)), nil
}

// fromCount is TicksToDateTime (unit 1) and TimestampToDateTime (unit
// ticksPerMs): a count since the Unix epoch, truncated to whole ticks.
func fromCount(v Value, unit int64) (Value, error) {
	if v.kind != Number {
		return undef, nil
	}
	var t int64
	if n, ok := v.AsInt(); ok {
		var fits bool
		if t, fits = mulInt64(n, unit); !fits {
			return undef, nil
		}
	} else {
		f := math.Trunc(v.AsFloat() * float64(unit))
		if !(f >= minTicks && f <= maxTicks) {
			return undef, nil
		}
		t = int64(f)
	}
	if t < minTicks || t > maxTicks {
		return undef, nil
	}
	return StringValue(formatTicks(t)), nil
}

// unixEpochTicks is 1970-01-01 and windowsEpochTicks 1601-01-01, the
// earliest DateTimeBin origin (datetimebin.md).
const windowsEpochTicks = -11644473600 * ticksPerSecond

// fnDateTimeBin is DateTimeBin(dateTime, part [, size [, origin]]): the
// start of the size-part bin, counted from origin (default the Unix
// epoch), that holds dateTime. Parts from day down to nanosecond; size a
// positive integer; origin not before 1601.
func fnDateTimeBin(c *callCtx, a []Value) (Value, error) {
	t, ok1 := dateTimeArg(a[0])
	part, ok2 := parsePart(a[1])
	if !ok1 || !ok2 || part == partYear || part == partMonth {
		return undef, nil
	}
	size := int64(1)
	if len(a) >= 3 {
		n, ok := a[2].AsInt()
		if !ok || n <= 0 {
			return undef, nil
		}
		size = n
	}
	origin := int64(0)
	if len(a) == 4 {
		o, ok := dateTimeArg(a[3])
		if !ok || o < windowsEpochTicks {
			return undef, nil
		}
		origin = o
	}
	d := t - origin
	if part == partNanosecond {
		// Bins of size nanoseconds: work in nanoseconds, which can exceed
		// int64 over the whole calendar.
		ns := new(big.Int).Mul(big.NewInt(d), big.NewInt(100))
		sz := big.NewInt(size)
		q := new(big.Int).Div(ns, sz) // Euclidean: floor for positive sz
		ns.Mul(q, sz)
		ticks := new(big.Int).Div(ns, big.NewInt(100))
		if !ticks.IsInt64() {
			return undef, nil
		}
		r := origin + ticks.Int64()
		if r < minTicks || r > maxTicks {
			return undef, nil
		}
		return StringValue(formatTicks(r)), nil
	}
	bin, fits := mulInt64(size, partTicks[part])
	if !fits {
		return undef, nil
	}
	r := origin + floorDiv(d, bin)*bin
	if r < minTicks || r > maxTicks {
		return undef, nil
	}
	return StringValue(formatTicks(r)), nil
}
