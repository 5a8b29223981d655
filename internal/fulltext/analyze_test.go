package fulltext

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

func tokens(a *Analyzer, s string) string {
	var b strings.Builder
	for i, t := range a.Analyze(s) {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%s@%d", t.Term, t.Pos)
	}
	return b.String()
}

func TestAnalyzeEnglish(t *testing.T) {
	en := AnalyzerFor(English)
	cases := []struct{ in, want string }{
		{"", ""},
		{"The red bicycle", "red@1 bicycl@2"}, // "the" is a stop word; positions keep its place
		{"Mountain bicycles, RED bicycles!", "mountain@0 bicycl@1 red@2 bicycl@3"},
		{"don't stop", "stop@1"},                       // "don't" is a listed stop word
		{"the dog's bone", "dog@1 bone@2"},             // apostrophe kept inside a word, 's stemmed away
		{"rock’n’roll", "rock'n'rol@0"},                // U+2019 is an apostrophe
		{"'quoted' words", "quot@0 word@1"},            // quotes around a word are not part of it
		{"e-mail high-speed", "mail@1 high@2 speed@3"}, // hyphens split; "e" is a stop word
		{"Running runners ran", "run@0 runner@1 ran@2"},
		{"COVID-19 in 2024", "covid@0 19@1 2024@3"}, // digits are words; "in" is a stop word
		{"7 wonders", "wonder@1"},                   // single digits are stop words
		{"Crème brûlée", "crème@0 brûlée@1"},        // diacritics kept
		{"Cre\u0300me", "crème@0"},                  // NFD is composed first
		{"東京タワー", "東@0 京@1 タ@2 ワ@3 ー@4"},            // ideographs and kana one by one
		{"tab\tnew\nline", "tab@0 line@2"},          // "new" is a stop word
		{"snake_case x.y", "snake@0 case@1"},        // "x" and "y" are stop words
	}
	for _, c := range cases {
		if got := tokens(en, c.in); got != c.want {
			t.Errorf("Analyze(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestAnalyzeOtherLanguages(t *testing.T) {
	// Other languages have no stop words (the service removes stop words in
	// English only). Every language is stemmed (Snowball).
	de := AnalyzerFor(German)
	if got := tokens(de, "Die Straße und die Häuser"); got != "die@0 strass@1 und@2 die@3 haus@4" {
		t.Errorf("German: %q", got)
	}
	if !de.Stems() || !AnalyzerFor(English).Stems() || !AnalyzerFor(Spanish).Stems() || !AnalyzerFor(French).Stems() || !AnalyzerFor(Italian).Stems() || !AnalyzerFor(PortugueseBR).Stems() {
		t.Error("Stems")
	}
	es := AnalyzerFor(Spanish)
	if got := tokens(es, "Las bicicletas rojas"); got != "las@0 biciclet@1 roj@2" {
		t.Errorf("Spanish: %q", got)
	}
	if AnalyzerFor("xx-XX").Language() != English {
		t.Error("unknown language should fall back to English")
	}
	// The service's own multi-language test data (azure-cosmos Python
	// tests/test_full_text_policy.py): the search term occurs in the text.
	data := []struct {
		lang       Language
		text, term string
	}{
		{English, "This is a test in English.", "English"},
		{French, "Ceci est une démonstration en français.", "démonstration"},
		{German, "Dies ist ein Beispiel auf Deutsch.", "Beispiel"},
		{Italian, "Questo è un esempio in italiano.", "esempio"},
		{PortugueseBR, "Este é um exemplo em português do Brasil.", "exemplo"},
		{PortuguesePT, "Este é um exemplo em português de Portugal.", "exemplo"},
		{Spanish, "Esta es una demostración en español.", "demostración"},
	}
	for _, d := range data {
		a := AnalyzerFor(d.lang)
		if !a.Contains(d.text, a.Term(d.term)) {
			t.Errorf("%s: %q not found in %q", d.lang, d.term, d.text)
		}
	}
}

func TestAnalyzeLimits(t *testing.T) {
	en := AnalyzerFor(English)
	long := strings.Repeat("x", MaxTermBytes+1)
	if got := tokens(en, "alpha "+long+" omega"); got != "alpha@0 omega@2" {
		t.Errorf("long word: %q", got)
	}
	if testing.Short() {
		return
	}
	many := strings.Repeat("word ", MaxTokens+10)
	toks := en.Analyze(many)
	if len(toks) != MaxTokens || toks[len(toks)-1].Pos != MaxTokens-1 {
		t.Errorf("MaxTokens: %d tokens, last at %d", len(toks), toks[len(toks)-1].Pos)
	}
}

func FuzzAnalyze(f *testing.F) {
	seeds := []string{"The red bicycle", "don't", "a'b'c", "東京", "Cre\u0300me", "\xff\xfe", "'''", "x\u2019y",
		"naïve quand jouer", "Straße Häuser", "haciéndola", "corações", "crocchio divano", "ëëïï yyy quuu"}
	for i, s := range seeds {
		f.Add(string(rune('0'+i)) + s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > 1<<16 || len(s) == 0 {
			return
		}
		// The first byte picks the language.
		a := AnalyzerFor(Languages[int(s[0])%len(Languages)])
		s = s[1:]
		toks := a.Analyze(s)
		if len(toks) > len(s) {
			t.Fatalf("%d tokens from %d bytes", len(toks), len(s))
		}
		for i, tok := range toks {
			if tok.Term == "" || len(tok.Term) > MaxTermBytes || !utf8.ValidString(tok.Term) {
				t.Fatalf("bad term %q", tok.Term)
			}
			if i > 0 && tok.Pos <= toks[i-1].Pos {
				t.Fatalf("positions not increasing: %v", toks)
			}
		}
		// A text contains each of its own words.
		for _, tok := range toks {
			q := Query{Tokens: []QueryToken{{Term: tok.Term}}}
			if !a.Prepare(s).Contains(q) {
				t.Fatalf("%q does not contain its term %q", s, tok.Term)
			}
		}
		dt := a.Index(s)
		if int(dt.Length) != len(toks) {
			t.Fatalf("length %d, %d tokens", dt.Length, len(toks))
		}
	})
}

// FuzzStem runs every stemmer on arbitrary words, upper case and marker
// letters included, which the analyzer never passes: they must not panic.
func FuzzStem(f *testing.F) {
	for _, s := range []string{"naïve", "HiH", "aYiUe", "qu", "a~o~", "ß", "'s'", "yyy", "ëï", "iéndo"} {
		f.Add(s)
	}
	stems := []func(string) string{stemEnglish, stemGerman, stemSpanish, stemFrench, stemItalian, stemPortuguese}
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > 512 {
			return
		}
		for _, stem := range stems {
			_ = stem(s)
		}
	})
}
