package fulltext

import "strings"

// This file is the Portuguese stemmer of Snowball 2, written from the
// published description of the algorithm ("Portuguese stemming
// algorithm", https://snowballstem.org/algorithms/portuguese/stemmer.html,
// as published before the Snowball 3.0.0 changes: snowball-website commit
// 0b89c02). It serves pt-PT and pt-BR alike, as Snowball has one
// Portuguese algorithm. The test data is the snowball-data Portuguese
// vocabulary of that algorithm.

func ptVowel(r rune) bool {
	switch r {
	case 'a', 'e', 'i', 'o', 'u', 'á', 'é', 'í', 'ó', 'ú', 'â', 'ê', 'ô':
		return true
	}
	return false
}

var (
	ptStep1 = strings.Fields(`eza ezas ico ica icos icas ismo ismos ável ível ista istas oso osa
		osos osas amento amentos imento imentos adora ador aça~o adoras adores aço~es
		ante antes ância logia logias uça~o uço~es ência ências amente mente idade idades
		iva ivo ivas ivos ira iras`)
	ptStep2 = strings.Fields(`ada ida ia aria eria iria ará ara erá era irá ava asse esse
		isse aste este iste ei arei erei irei am iam ariam eriam iriam
		aram eram iram avam em arem erem irem assem essem issem ado ido
		ando endo indo ara~o era~o ira~o ar er ir as adas idas ias arias
		erias irias arás aras erás eras irás avas es ardes erdes
		irdes ares eres ires asses esses isses astes estes istes is ais
		eis íeis aríeis eríeis iríeis áreis areis éreis ereis
		íreis ireis ásseis ésseis ísseis áveis ados idos ámos
		amos íamos aríamos eríamos iríamos áramos éramos
		íramos ávamos emos aremos eremos iremos ássemos êssemos
		íssemos imos armos ermos irmos eu iu ou ira iras`)
)

func stemPortuguese(word string) string {
	// ã and õ are a vowel followed by a consonant, written a~ and o~.
	word = strings.NewReplacer("ã", "a~", "õ", "o~").Replace(word)
	w := []rune(word)
	rv := rvSpanish(w, ptVowel)
	p1, p2 := regions(w, ptVowel)
	s := &suffixer{w: w}
	in := func(suf string, from int) bool { return s.ends(suf) && s.start(suf) >= from }

	// Step 1: standard suffixes.
	altered := false
	switch suf := s.longest(ptStep1...); suf {
	case "":
	case "logia", "logias":
		if in(suf, p2) {
			s.replace(suf, "log")
			altered = true
		}
	case "uça~o", "uço~es":
		if in(suf, p2) {
			s.replace(suf, "u")
			altered = true
		}
	case "ência", "ências":
		if in(suf, p2) {
			s.replace(suf, "ente")
			altered = true
		}
	case "amente":
		if in(suf, p1) {
			s.cut(suf)
			altered = true
			switch x := s.longest("iv", "os", "ic", "ad"); {
			case x == "" || !in(x, p2):
			case x == "iv":
				s.cut(x)
				if in("at", p2) {
					s.cut("at")
				}
			default:
				s.cut(x)
			}
		}
	case "mente": // then ante, avel (no accent, as published) or ível
		if in(suf, p2) {
			s.cut(suf)
			altered = true
			if x := s.longest("ante", "avel", "ível"); x != "" && in(x, p2) {
				s.cut(x)
			}
		}
	case "idade", "idades":
		if in(suf, p2) {
			s.cut(suf)
			altered = true
			if x := s.longest("abil", "ic", "iv"); x != "" && in(x, p2) {
				s.cut(x)
			}
		}
	case "iva", "ivo", "ivas", "ivos":
		if in(suf, p2) {
			s.cut(suf)
			altered = true
			if in("at", p2) {
				s.cut("at")
			}
		}
	case "ira", "iras":
		if in(suf, rv) && s.precededBy(suf, 'e') {
			s.replace(suf, "ir")
			altered = true
		}
	default: // the suffixes deleted in R2
		if in(suf, p2) {
			s.cut(suf)
			altered = true
		}
	}

	// Step 2: verb suffixes in RV.
	if !altered {
		if suf := s.longestIn(rv, ptStep2...); suf != "" {
			s.cut(suf)
			altered = true
		}
	}

	if altered {
		// Step 3: i after c, in RV.
		if in("i", rv) && s.precededBy("i", 'c') {
			s.cut("i")
		}
	} else {
		// Step 4: residual suffix.
		if suf := s.longest("os", "a", "i", "o", "á", "í", "ó"); suf != "" && in(suf, rv) {
			s.cut(suf)
		}
	}

	// Step 5.
	switch suf := s.longest("e", "é", "ê", "ç"); suf {
	case "e", "é", "ê":
		if in(suf, rv) {
			s.cut(suf)
			if (s.ends("gu") || s.ends("ci")) && s.start("u") >= rv {
				s.w = s.w[:len(s.w)-1]
			}
		}
	case "ç":
		s.replace(suf, "c")
	}
	return strings.NewReplacer("a~", "ã", "o~", "õ").Replace(string(s.w))
}
