package fulltext

import "strings"

// This file is the French stemmer of Snowball 2, written from the
// published description of the algorithm ("French stemming algorithm",
// https://snowballstem.org/algorithms/french/stemmer.html, as published
// before the Snowball 3 changes: snowball-website commit 0b89c02, with the
// 2018 diaeresis handling). The test data is the snowball-data French
// vocabulary of that algorithm.

func frVowel(r rune) bool {
	switch r {
	case 'a', 'e', 'i', 'o', 'u', 'y', 'â', 'à', 'ë', 'é', 'ê', 'è', 'ï', 'î', 'ô', 'û', 'ù':
		return true
	}
	return false
}

var (
	frStep2a = strings.Fields(`îmes ît îtes i ie ies ir ira irai iraIent irais irait iras
		irent irez iriez irions irons iront is issaIent issais issait
		issant issante issantes issants isse issent isses issez issiez issions issons it`)
	frStep2bDelete = strings.Fields(`é ée ées és èrent er era erai eraIent erais erait eras erez
		eriez erions erons eront ez iez`)
	frStep2bE = strings.Fields(`âmes ât âtes a ai aIent ais ait ant ante antes ants as asse
		assent asses assiez assions`)
	frStep1 = strings.Fields(`ance iqUe isme able iste eux ances iqUes ismes ables istes
		atrice ateur ation atrices ateurs ations logie logies usion ution usions utions
		ence ences ement ements ité ités if ive ifs ives eaux aux euse euses
		issement issements amment emment ment ments`)
)

// frMark puts u, i and y that act as consonants in upper case and writes ë
// and ï as He and Hi, scanning from the start as the description says.
func frMark(w []rune) []rune {
	for i := 0; i < len(w); {
		c := w[i]
		switch {
		case frVowel(c) && i+1 < len(w) && (w[i+1] == 'u' || w[i+1] == 'i') && i+2 < len(w) && frVowel(w[i+2]):
			w[i+1] -= 'a' - 'A'
		case frVowel(c) && i+1 < len(w) && w[i+1] == 'y':
			w[i+1] = 'Y'
		case c == 'ë' || c == 'ï':
			v := 'e'
			if c == 'ï' {
				v = 'i'
			}
			w = append(w[:i], append([]rune{'H', v}, w[i+1:]...)...)
		case c == 'y' && i+1 < len(w) && frVowel(w[i+1]):
			w[i] = 'Y'
		case c == 'q' && i+1 < len(w) && w[i+1] == 'u':
			w[i+1] = 'U'
		default:
			i++
		}
	}
	return w
}

func rvFrench(w []rune) int {
	n := len(w)
	if n >= 3 && frVowel(w[0]) && frVowel(w[1]) {
		return 3
	}
	if n >= 3 {
		switch string(w[:3]) {
		case "par", "col", "tap":
			return 3
		}
	}
	for i := 1; i < n; i++ {
		if frVowel(w[i]) {
			return i + 1
		}
	}
	return n
}

func stemFrench(word string) string {
	w := frMark([]rune(word))
	rv := rvFrench(w)
	p1, p2 := regions(w, frVowel)
	s := &suffixer{w: w}
	in := func(suf string, from int) bool { return s.ends(suf) && s.start(suf) >= from }

	// Step 1: standard suffixes. done reports a change that ends the
	// search; the -ment family changes the word but still lets step 2 run.
	done := false
	switch suf := s.longest(frStep1...); suf {
	case "":
	case "ance", "iqUe", "isme", "able", "iste", "eux", "ances", "iqUes", "ismes", "ables", "istes":
		if in(suf, p2) {
			s.cut(suf)
			done = true
		}
	case "atrice", "ateur", "ation", "atrices", "ateurs", "ations":
		if in(suf, p2) {
			s.cut(suf)
			done = true
			if s.ends("ic") {
				if in("ic", p2) {
					s.cut("ic")
				} else {
					s.replace("ic", "iqU")
				}
			}
		}
	case "logie", "logies":
		if in(suf, p2) {
			s.replace(suf, "log")
			done = true
		}
	case "usion", "ution", "usions", "utions":
		if in(suf, p2) {
			s.replace(suf, "u")
			done = true
		}
	case "ence", "ences":
		if in(suf, p2) {
			s.replace(suf, "ent")
			done = true
		}
	case "ement", "ements":
		if in(suf, rv) {
			s.cut(suf)
			done = true
			switch x := s.longest("iv", "eus", "abl", "iqU", "ièr", "Ièr"); x {
			case "iv":
				if in(x, p2) {
					s.cut(x)
					if in("at", p2) {
						s.cut("at")
					}
				}
			case "eus":
				if in(x, p2) {
					s.cut(x)
				} else if in(x, p1) {
					s.replace(x, "eux")
				}
			case "abl", "iqU":
				if in(x, p2) {
					s.cut(x)
				}
			case "ièr", "Ièr":
				if in(x, rv) {
					s.replace(x, "i")
				}
			}
		}
	case "ité", "ités":
		if in(suf, p2) {
			s.cut(suf)
			done = true
			switch x := s.longest("abil", "ic", "iv"); x {
			case "abil":
				if in(x, p2) {
					s.cut(x)
				} else {
					s.replace(x, "abl")
				}
			case "ic":
				if in(x, p2) {
					s.cut(x)
				} else {
					s.replace(x, "iqU")
				}
			case "iv":
				if in(x, p2) {
					s.cut(x)
				}
			}
		}
	case "if", "ive", "ifs", "ives":
		if in(suf, p2) {
			s.cut(suf)
			done = true
			if in("at", p2) {
				s.cut("at")
				if s.ends("ic") {
					if in("ic", p2) {
						s.cut("ic")
					} else {
						s.replace("ic", "iqU")
					}
				}
			}
		}
	case "eaux":
		s.replace(suf, "eau")
		done = true
	case "aux":
		if in(suf, p1) {
			s.replace(suf, "al")
			done = true
		}
	case "euse", "euses":
		if in(suf, p2) {
			s.cut(suf)
			done = true
		} else if in(suf, p1) {
			s.replace(suf, "eux")
			done = true
		}
	case "issement", "issements":
		if in(suf, p1) && s.start(suf) >= 1 && !frVowel(s.w[s.start(suf)-1]) {
			s.cut(suf)
			done = true
		}
	case "amment":
		if in(suf, rv) {
			s.replace(suf, "ant")
		}
	case "emment":
		if in(suf, rv) {
			s.replace(suf, "ent")
		}
	case "ment", "ments":
		if st := s.start(suf); st >= 1 && st-1 >= rv && frVowel(s.w[st-1]) {
			s.cut(suf)
		}
	}

	// Steps 2a and 2b: verb suffixes, confined to RV.
	if !done {
		if suf := s.longestIn(rv, frStep2a...); suf != "" {
			if st := s.start(suf); st-1 >= rv && s.w[st-1] != 'H' && !frVowel(s.w[st-1]) {
				s.cut(suf)
				done = true
			}
		}
	}
	if !done {
		switch suf := s.longestIn(rv, append(append([]string{"ions"}, frStep2bDelete...), frStep2bE...)...); {
		case suf == "":
		case suf == "ions":
			if in(suf, p2) {
				s.cut(suf)
				done = true
			}
		case contains(frStep2bDelete, suf):
			s.cut(suf)
			done = true
		default:
			s.cut(suf)
			done = true
			if in("e", rv) {
				s.cut("e")
			}
		}
	}

	if done {
		// Step 3.
		if n := len(s.w); n > 0 {
			switch s.w[n-1] {
			case 'Y':
				s.w[n-1] = 'i'
			case 'ç':
				s.w[n-1] = 'c'
			}
		}
	} else {
		// Step 4: residual suffix.
		if n := len(s.w); n >= 2 && s.w[n-1] == 's' {
			p := s.w[n-2]
			keep := strings.ContainsRune("aiouès", p)
			if p == 'i' && n >= 3 && s.w[n-3] == 'H' {
				keep = false
			}
			if !keep {
				s.w = s.w[:n-1]
			}
		}
		switch suf := s.longestIn(rv, "ion", "ier", "ière", "Ier", "Ière", "e"); suf {
		case "ion":
			if st := s.start(suf); st >= p2 && st-1 >= rv && (s.w[st-1] == 's' || s.w[st-1] == 't') {
				s.cut(suf)
			}
		case "ier", "ière", "Ier", "Ière":
			s.replace(suf, "i")
		case "e":
			s.cut(suf)
		}
	}

	// Step 5: undouble.
	if x := s.longest("enn", "onn", "ett", "ell", "eill"); x != "" {
		s.w = s.w[:len(s.w)-1]
	}
	// Step 6: un-accent é or è before a final run of non-vowels.
	i := len(s.w)
	for i > 0 && !frVowel(s.w[i-1]) {
		i--
	}
	if i < len(s.w) && i > 0 && (s.w[i-1] == 'é' || s.w[i-1] == 'è') {
		s.w[i-1] = 'e'
	}

	var b strings.Builder
	for j := 0; j < len(s.w); j++ {
		switch r := s.w[j]; r {
		case 'I':
			b.WriteRune('i')
		case 'U':
			b.WriteRune('u')
		case 'Y':
			b.WriteRune('y')
		case 'H':
			if j+1 < len(s.w) && s.w[j+1] == 'e' {
				b.WriteRune('ë')
				j++
			} else if j+1 < len(s.w) && s.w[j+1] == 'i' {
				b.WriteRune('ï')
				j++
			}
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
