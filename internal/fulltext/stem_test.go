package fulltext

import (
	"bufio"
	"os"
	"strings"
	"testing"
)

// TestStemEnglishSnowballData checks the stemmer against a sample of the
// Snowball project's own vocabulary and expected output (see
// testdata/README.md for the source and licence). The whole vocabulary
// (42,603 words at snowball-data commit 4412ee8) also matched when the
// stemmer was written.
func TestStemEnglishSnowballData(t *testing.T) {
	checkSnowballData(t, "testdata/snowball_english_sample.txt", stemEnglish, 4000)
}

// TestStemGermanSnowballData does the same for German (35,033 words at
// snowball-data commit 44699bf matched when the stemmer was written).
func TestStemGermanSnowballData(t *testing.T) {
	checkSnowballData(t, "testdata/snowball_german_sample.txt", stemGerman, 3000)
}

// TestStemSpanishSnowballData: 28,390 words at snowball-data commit 44699bf
// matched when the stemmer was written.
func TestStemSpanishSnowballData(t *testing.T) {
	checkSnowballData(t, "testdata/snowball_spanish_sample.txt", stemSpanish, 2500)
}

// TestStemPortugueseSnowballData: 32,016 words at snowball-data commit
// 44699bf matched when the stemmer was written.
func TestStemPortugueseSnowballData(t *testing.T) {
	checkSnowballData(t, "testdata/snowball_portuguese_sample.txt", stemPortuguese, 3000)
}

// TestStemItalianSnowballData: 35,495 words at snowball-data commit
// 4f982ec matched when the stemmer was written.
func TestStemItalianSnowballData(t *testing.T) {
	checkSnowballData(t, "testdata/snowball_italian_sample.txt", stemItalian, 3000)
}

// TestStemFrenchSnowballData: 20,805 words at snowball-data commit 8a2cdaf
// matched when the stemmer was written.
func TestStemFrenchSnowballData(t *testing.T) {
	checkSnowballData(t, "testdata/snowball_french_sample.txt", stemFrench, 2000)
}

func checkSnowballData(t *testing.T, file string, stem func(string) string, min int) {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		word, want, ok := strings.Cut(sc.Text(), " ")
		if !ok {
			t.Fatalf("bad line %q", sc.Text())
		}
		n++
		if got := stem(word); got != want {
			t.Errorf("%s: stem(%q) = %q, want %q", file, word, got, want)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if n < min {
		t.Fatalf("only %d pairs read", n)
	}
}

// TestStemEnglishRules spells out one case of each rule of the published
// algorithm (https://snowballstem.org/algorithms/english/stemmer.html),
// worked by hand.
func TestStemEnglishRules(t *testing.T) {
	cases := []struct{ in, want string }{
		{"at", "at"},                  // two letters: unchanged
		{"skies", "sky"},              // exception list 1
		{"news", "news"},              // invariant exception
		{"proceed", "proceed"},        // exception list 2
		{"caresses", "caress"},        // sses -> ss
		{"ties", "tie"},               // ies after one letter -> ie
		{"cries", "cri"},              // ies after two letters -> i
		{"gaps", "gap"},               // s deleted (vowel before the preceding letter)
		{"gas", "gas"},                // s kept
		{"kiwis", "kiwi"},             // s deleted
		{"agreed", "agre"},            // eed in R1 ("reed") -> agree; step 5 drops the e (R1, "agr" not a short syllable)
		{"hoping", "hope"},            // ing removed, short word gets e
		{"hopping", "hop"},            // double undoubled
		{"luxuriated", "luxuri"},      // at + e, then steps 3-5
		{"cry", "cri"},                // step 1c
		{"by", "by"},                  // too short
		{"say", "say"},                // y after vowel is Y
		{"generously", "generous"},    // gener prefix for R1
		{"communication", "communic"}, // commun prefix
		{"conditional", "condit"},
		{"rational", "ration"},
		{"relational", "relat"},
		{"fearlessly", "fearless"}, // lessli -> less
		{"hopefulness", "hope"},    // fulness -> ful, then ful deleted
		{"electrical", "electr"},
		{"adoption", "adopt"},   // ion after t in R2
		{"controll", "control"}, // ll in R2
		{"dog's", "dog"},        // apostrophe s
		{"'tis", "tis"},         // leading apostrophe
	}
	for _, c := range cases {
		if got := stemEnglish(c.in); got != c.want {
			t.Errorf("stemEnglish(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestStemGermanRules works the examples of the published German algorithm
// (https://snowballstem.org/algorithms/german/stemmer.html) by hand.
func TestStemGermanRules(t *testing.T) {
	cases := []struct{ in, want string }{
		{"äckern", "ack"},             // step 1 removes ern; the umlaut goes at the end
		{"ackers", "ack"},             // s after a valid s-ending (r) in step 1, er in step 2
		{"armes", "arm"},              // es
		{"bedürfnissen", "bedurfnis"}, // en after niss: the final s goes too
		{"derbsten", "derb"},          // en (step 1), then st after b with 3 letters before (step 2)
		{"straße", "strass"},          // ß is ss
		{"bauen", "bau"},              // u between vowels is a consonant: R1 after "bau"
		{"kategorie", "kategori"},
		{"aufeinander", "aufeinand"},
		{"gelegenheit", "geleg"},         // heit in R2, then en in R1
		{"schönheit", "schonheit"},       // heit not in R2 (R2 starts after "schönhe")
		{"freundlichkeit", "freundlich"}, // keit in R2; lich not in R2
		{"zu", "zu"},                     // shorter than 3: no regions
	}
	for _, c := range cases {
		if got := stemGerman(c.in); got != c.want {
			t.Errorf("stemGerman(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestStemSpanishRules works the examples of the published Spanish
// algorithm (https://snowballstem.org/algorithms/spanish/stemmer.html) by
// hand.
func TestStemSpanishRules(t *testing.T) {
	cases := []struct{ in, want string }{
		{"haciéndola", "hac"},       // step 0: la after iéndo in RV, accent removed; step 2b: iendo
		{"bicicletas", "biciclet"},  // step 3: as is not listed; step 2b removes as
		{"demostración", "demostr"}, // step 1: ación in R2
		{"rápidamente", "rapid"},    // step 1: amente in R1
		{"arguyendo", "argu"},       // step 2a: yendo after u
		{"distinguen", "disting"},   // step 2b: en after gu, the u goes too
		{"cosas", "cos"},            // step 2b: as in RV
		{"a", "a"},                  // too short for RV
	}
	for _, c := range cases {
		if got := stemSpanish(c.in); got != c.want {
			t.Errorf("stemSpanish(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestStemPortugueseRules works examples of the published Portuguese
// algorithm (https://snowballstem.org/algorithms/portuguese/stemmer.html)
// by hand.
func TestStemPortugueseRules(t *testing.T) {
	cases := []struct{ in, want string }{
		{"revolução", "revolu"},      // step 1: ução (uça~o) in R2 becomes u
		{"favoravelmente", "favor"},  // step 1: mente in R2, then avel in R2
		{"exemplo", "exempl"},        // step 4: o in RV
		{"portugueses", "portugues"}, // step 2: es in RV
		{"português", "português"},   // ês is no suffix of any step
		{"corações", "coraçõ"},       // step 2: es in RV; õ comes back
		{"bicicletas", "biciclet"},   // step 2: as
	}
	for _, c := range cases {
		if got := stemPortuguese(c.in); got != c.want {
			t.Errorf("stemPortuguese(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestStemItalianRules works the examples of the published Italian
// algorithm (https://snowballstem.org/algorithms/italian/stemmer.html) by
// hand.
func TestStemItalianRules(t *testing.T) {
	cases := []struct{ in, want string }{
		{"guardandogli", "guard"},  // step 0: gli after ando (guardando); step 2: ando
		{"accomodarci", "accomod"}, // step 0: ci after ar becomes e (accomodare); step 2: are
		{"crocchi", "crocc"},       // step 3a: i; step 3b: ch -> c
		{"crocchio", "crocc"},      // step 3a: o and the i before it
		{"divano", "divan"},        // exception
		{"esempio", "esemp"},       // step 3a: o, then i
	}
	for _, c := range cases {
		if got := stemItalian(c.in); got != c.want {
			t.Errorf("stemItalian(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestStemFrenchRules works examples of the published French algorithm
// (https://snowballstem.org/algorithms/french/stemmer.html) by hand.
func TestStemFrenchRules(t *testing.T) {
	cases := []struct{ in, want string }{
		{"démonstration", "démonstr"}, // step 1: ation in R2
		{"jouer", "jou"},              // u between vowels is U; step 2b: er
		{"yeux", "yeux"},              // y before a vowel is Y; eux not in R2
		{"quand", "quand"},            // u after q is U
		{"rapidement", "rapid"},       // step 1: ement in RV
		{"naïve", "naïv"},             // ï is Hi, keeping ive out of reach; step 4: e
		{"chanteuse", "chanteux"},     // euse not in R2 but in R1 becomes eux
	}
	for _, c := range cases {
		if got := stemFrench(c.in); got != c.want {
			t.Errorf("stemFrench(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
