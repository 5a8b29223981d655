package fulltext

// This file is the German stemmer of Snowball 2, written from the published
// description of the algorithm ("German stemming algorithm",
// https://snowballstem.org/algorithms/german/stemmer.html, as published
// before the Snowball 3.0.0 changes: snowball-website commit 40f3212). The
// test data is the snowball-data German vocabulary of that algorithm.

func deVowel(r rune) bool {
	switch r {
	case 'a', 'e', 'i', 'o', 'u', 'y', 'ä', 'ö', 'ü':
		return true
	}
	return false
}

func deSEnding(r rune) bool {
	switch r {
	case 'b', 'd', 'f', 'g', 'h', 'k', 'l', 'm', 'n', 'r', 't':
		return true
	}
	return false
}

func deSTEnding(r rune) bool { return r != 'r' && deSEnding(r) }

// regions returns R1 and R2's starts for w with vowel test v: R1 begins
// after the first non-vowel that follows a vowel, R2 likewise within R1.
func regions(w []rune, v func(rune) bool) (p1, p2 int) {
	after := func(from int) int {
		i := from
		for i < len(w) && !v(w[i]) {
			i++
		}
		for i < len(w) && v(w[i]) {
			i++
		}
		if i >= len(w) {
			return len(w)
		}
		return i + 1
	}
	p1 = after(0)
	return p1, after(p1)
}

func stemGerman(word string) string {
	var w []rune
	for _, r := range word {
		if r == 'ß' {
			w = append(w, 's', 's')
		} else {
			w = append(w, r)
		}
	}
	// u and y between vowels are consonants.
	for i := 1; i+1 < len(w); i++ {
		if (w[i] == 'u' || w[i] == 'y') && deVowel(w[i-1]) && deVowel(w[i+1]) {
			w[i] -= 'a' - 'A'
		}
	}
	p1, p2 := len(w), len(w)
	if len(w) >= 3 {
		p1, p2 = regions(w, deVowel)
		if p1 < 3 {
			p1 = 3
		}
	}
	s := &suffixer{w: w}

	// Step 1.
	switch suf := s.longest("em", "ern", "er", "e", "en", "es", "s"); suf {
	case "em", "ern", "er":
		if s.start(suf) >= p1 {
			s.cut(suf)
		}
	case "e", "en", "es":
		if s.start(suf) >= p1 {
			s.cut(suf)
			if s.ends("niss") {
				s.w = s.w[:len(s.w)-1]
			}
		}
	case "s":
		if st := s.start(suf); st >= p1 && st >= 1 && deSEnding(s.w[st-1]) {
			s.cut(suf)
		}
	}
	// Step 2.
	switch suf := s.longest("en", "er", "est", "st"); suf {
	case "en", "er", "est":
		if s.start(suf) >= p1 {
			s.cut(suf)
		}
	case "st":
		if st := s.start(suf); st >= p1 && st >= 4 && deSTEnding(s.w[st-1]) {
			s.cut(suf)
		}
	}
	// Step 3: d-suffixes.
	switch suf := s.longest("end", "ung", "ig", "ik", "isch", "lich", "heit", "keit"); suf {
	case "end", "ung":
		if s.start(suf) >= p2 {
			s.cut(suf)
			if s.ends("ig") && s.start("ig") >= p2 && !s.precededBy("ig", 'e') {
				s.cut("ig")
			}
		}
	case "ig", "ik", "isch":
		if s.start(suf) >= p2 && !s.precededBy(suf, 'e') {
			s.cut(suf)
		}
	case "lich", "heit":
		if s.start(suf) >= p2 {
			s.cut(suf)
			for _, x := range []string{"er", "en"} {
				if s.ends(x) && s.start(x) >= p1 {
					s.cut(x)
					break
				}
			}
		}
	case "keit":
		if s.start(suf) >= p2 {
			s.cut(suf)
			if x := s.longest("lich", "ig"); x != "" && s.start(x) >= p2 {
				s.cut(x)
			}
		}
	}
	for i, r := range s.w {
		switch r {
		case 'U':
			s.w[i] = 'u'
		case 'Y':
			s.w[i] = 'y'
		case 'ä':
			s.w[i] = 'a'
		case 'ö':
			s.w[i] = 'o'
		case 'ü':
			s.w[i] = 'u'
		}
	}
	return string(s.w)
}

// suffixer is a word being cut from its end.
type suffixer struct{ w []rune }

func (s *suffixer) ends(suf string) bool {
	rs := []rune(suf)
	if len(rs) > len(s.w) {
		return false
	}
	for i, r := range rs {
		if s.w[len(s.w)-len(rs)+i] != r {
			return false
		}
	}
	return true
}

func (s *suffixer) longest(sufs ...string) string {
	best := ""
	for _, x := range sufs {
		if len([]rune(x)) > len([]rune(best)) && s.ends(x) {
			best = x
		}
	}
	return best
}

func (s *suffixer) start(suf string) int { return len(s.w) - len([]rune(suf)) }

func (s *suffixer) cut(suf string) { s.w = s.w[:s.start(suf)] }

func (s *suffixer) precededBy(suf string, r rune) bool {
	st := s.start(suf)
	return st >= 1 && s.w[st-1] == r
}
