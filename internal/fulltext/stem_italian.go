package fulltext

import "strings"

// This file is the Italian stemmer of Snowball 2, written from the
// published description of the algorithm ("Italian stemming algorithm",
// https://snowballstem.org/algorithms/italian/stemmer.html, as published
// at snowball-website commit 77a7f68, 2022-11-16, with its "divano"
// exception). The test data is the snowball-data Italian vocabulary of that
// algorithm (it also shows that the verb suffix printed "Yamo" in the
// description does not exist: "continuiamo" keeps "iam").

func itVowel(r rune) bool {
	switch r {
	case 'a', 'e', 'i', 'o', 'u', 'à', 'è', 'ì', 'ò', 'ù':
		return true
	}
	return false
}

var (
	itPronouns = strings.Fields(`ci gli la le li lo mi ne si ti vi sene gliela gliele glieli glielo gliene
		mela mele meli melo mene tela tele teli telo tene cela cele celi celo cene vela vele veli velo vene`)
	itStep1 = strings.Fields(`anza anze ico ici ica ice iche ichi ismo ismi abile abili ibile ibili
		ista iste isti istà istè istì oso osi osa ose mente atrice atrici ante anti
		azione azioni atore atori logia logie uzione uzioni usione usioni enza enze
		amento amenti imento imenti amente ità ivo ivi iva ive`)
	itStep2 = strings.Fields(`ammo ando ano are arono asse assero assi assimo ata ate
		ati ato ava avamo avano avate avi avo emmo enda ende endi endo erà erai eranno ere
		erebbe erebbero erei eremmo eremo ereste eresti erete erò erono essero ete eva evamo
		evano evate evi evo iamo immo irà irai iranno ire irebbe irebbero irei iremmo
		iremo ireste iresti irete irò irono isca iscano isce isci isco iscono issero ita ite
		iti ito iva ivamo ivano ivate ivi ivo ono uta ute uti uto ar ir`)
	itGrave = strings.NewReplacer("á", "à", "é", "è", "í", "ì", "ó", "ò", "ú", "ù")
)

func stemItalian(word string) string {
	if word == "divano" {
		return "divan" // not conflated with diva
	}
	w := []rune(itGrave.Replace(word))
	// u after q, and u and i between vowels, are consonants.
	for i := 1; i < len(w); i++ {
		if w[i] == 'u' && w[i-1] == 'q' {
			w[i] = 'U'
		}
	}
	for i := 1; i+1 < len(w); i++ {
		if (w[i] == 'u' || w[i] == 'i') && itVowel(w[i-1]) && itVowel(w[i+1]) {
			w[i] -= 'a' - 'A'
		}
	}
	rv := rvSpanish(w, itVowel)
	p1, p2 := regions(w, itVowel)
	s := &suffixer{w: w}
	in := func(suf string, from int) bool { return s.ends(suf) && s.start(suf) >= from }

	// Step 0: attached pronoun after a verb ending in RV.
	if pr := s.longest(itPronouns...); pr != "" {
		base := &suffixer{w: s.w[:s.start(pr)]}
		if v := base.longest("ando", "endo", "ar", "er", "ir"); v != "" && base.start(v) >= rv {
			if v == "ando" || v == "endo" {
				s.cut(pr)
			} else {
				s.replace(pr, "e")
			}
		}
	}

	// Step 1: standard suffixes.
	removed := false
	switch suf := s.longest(itStep1...); suf {
	case "":
	case "azione", "azioni", "atore", "atori":
		if in(suf, p2) {
			s.cut(suf)
			removed = true
			if in("ic", p2) {
				s.cut("ic")
			}
		}
	case "logia", "logie":
		if in(suf, p2) {
			s.replace(suf, "log")
			removed = true
		}
	case "uzione", "uzioni", "usione", "usioni":
		if in(suf, p2) {
			s.replace(suf, "u")
			removed = true
		}
	case "enza", "enze":
		if in(suf, p2) {
			s.replace(suf, "ente")
			removed = true
		}
	case "amento", "amenti", "imento", "imenti":
		if in(suf, rv) {
			s.cut(suf)
			removed = true
		}
	case "amente":
		if in(suf, p1) {
			s.cut(suf)
			removed = true
			switch x := s.longest("iv", "os", "ic", "abil"); {
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
	case "ità":
		if in(suf, p2) {
			s.cut(suf)
			removed = true
			if x := s.longest("abil", "ic", "iv"); x != "" && in(x, p2) {
				s.cut(x)
			}
		}
	case "ivo", "ivi", "iva", "ive":
		if in(suf, p2) {
			s.cut(suf)
			removed = true
			if in("at", p2) {
				s.cut("at")
				if in("ic", p2) {
					s.cut("ic")
				}
			}
		}
	default: // the suffixes deleted in R2
		if in(suf, p2) {
			s.cut(suf)
			removed = true
		}
	}

	// Step 2: verb suffixes in RV.
	if !removed {
		if suf := s.longestIn(rv, itStep2...); suf != "" {
			s.cut(suf)
		}
	}

	// Step 3a: a final vowel in RV, then a preceding i in RV.
	if n := len(s.w); n > 0 && n-1 >= rv {
		switch s.w[n-1] {
		case 'a', 'e', 'i', 'o', 'à', 'è', 'ì', 'ò':
			s.w = s.w[:n-1]
			if in("i", rv) {
				s.cut("i")
			}
		}
	}
	// Step 3b: ch and gh in RV lose the h.
	if (s.ends("ch") || s.ends("gh")) && s.start("ch") >= rv {
		s.w = s.w[:len(s.w)-1]
	}
	for i, r := range s.w {
		switch r {
		case 'I':
			s.w[i] = 'i'
		case 'U':
			s.w[i] = 'u'
		}
	}
	return string(s.w)
}
