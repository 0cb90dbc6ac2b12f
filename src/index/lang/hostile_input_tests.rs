//! Hostile input for the extractors whose tests were the same two functions in every file:
//! truncated and malformed snippets, then seeded junk and long repetitions. One table, a row a
//! language, every row run the same way; what a language must still read right in such a file
//! stays with its own tests.

use super::test_support::{
    Extract, extract_each, extract_junk, junk_chars64, junk_pieces64, random_text,
};
use super::{java, kotlin, php, python, ruby, scala};

/// How a language's junk text is drawn.
enum Junk {
    /// Bytes of the alphabet read as characters ([`junk_chars64`]) from the seed, and random
    /// bytes besides ([`random_text`] from [`RANDOM_SEED`]).
    Chars(&'static [u8], u64),
    /// Space-separated pieces ([`junk_pieces64`]) from the seed.
    Pieces(&'static str, u64),
}

/// One language's hostile input.
struct Hostile {
    extract: Extract,
    /// The file extension: snippets are read as `x.<ext>`, junk as `junk.<ext>` (which names
    /// the language in a failure).
    ext: &'static str,
    /// Truncated and malformed files.
    snippets: &'static [&'static str],
    junk: Junk,
    /// Long texts as (before, unit, times, after): the unit repeated between the two.
    repeated: &'static [(&'static str, &'static str, usize, &'static str)],
}

/// The seed of the random bytes every [`Junk::Chars`] language also reads.
const RANDOM_SEED: u64 = 0xdead_beef_cafe_f00d;

const LANGUAGES: &[Hostile] = &[
    Hostile {
        extract: python::extract,
        ext: "py",
        snippets: &[
            "class A(",
            "def f(\n  a,",
            "@app.route(\ndef",
            "from . import (",
            "import",
            "from",
            "x = os.getenv(",
            "p.produce(topic=",
            "\tclass A:\n  def f(self): pass\n\t\tdef g(): pass",
            "requests.get(f\"{",
            "class A:\n    X = \n",
            "a = b = \n",
            "with x as",
            ")]}([{",
            "\\\n\\",
        ],
        junk: Junk::Chars(b"classdefimportfrom@()[]{}:=,.'\"#\\\n\t  xyzABC_0123456789+-*/%asyncwithsubscribeproducesendget", 0x2545_f491_4f6c_dd1d),
        repeated: &[
            ("", "(", 50_000, ""),
            ("", "def f(:\n    ", 5_000, ""),
        ],
    },
    Hostile {
        extract: ruby::extract,
        ext: "rb",
        snippets: &[
            "class",
            "class A <",
            "module A::",
            "def",
            "def self.",
            "def (",
            "end end end",
            "X =",
            "ENV.fetch(",
            "get '/x', to:",
            "resources",
            "x = %w[",
            "a =~ /",
            "@stub.",
            "Orders::OrderService::Stub.new(",
            "producer.produce(topic:",
            "class A\n  def f\n",
            "::",
            "__END__\nclass A",
        ],
        junk: Junk::Chars(b"classmoduledefenddoif unless@:;()[]{}=<>,.'\"#\\\n\t  xyzABC_012+-*/%|&ENVfetchsubscribeproducegetresources", 0x9e37_79b9_7f4a_7c15),
        repeated: &[
            ("", "class A\n", 20_000, ""),
            ("", "do ", 50_000, ""),
            ("a.get x", "é", 600, ""),
            ("a.get \"/é", "é", 600, "\""),
        ],
    },
    Hostile {
        extract: php::extract,
        ext: "php",
        snippets: &[
            "<?php class",
            "<?php class A extends",
            "<?php function",
            "<?php function &",
            "<?php namespace",
            "<?php use A\\{B,",
            "<?php const",
            "<?php enum E { case",
            "<?php #[Route('/x'",
            "<?php Route::prefix('v1')->group(function () {",
            "<?php $x = new",
            "<?php }}}{{{",
            "<?php define(",
            "<?php $client->get(\"{$",
            "<?php curl_exec(",
            "<?php $ch = curl_init($u); curl_setopt_array($ch, $o",
            "<?php /** @Route(\"/x\", methods={\"GET\"",
            "<?php /** @Route(",
            "<?php $app->group('/x', function (",
            "<?php $c = new Client(['base_uri' => ",
            "<?php class A { /** @Route(\"/a\") */ function __invoke(",
        ],
        junk: Junk::Chars(b"<?php classfunctionusenamespaceconstcaseenumnew#[]()${};:->\\=,.'\"/*\n\t  xyzABC_012RouteHttpgetsubscribenewTopic", 0x1234_5678_9abc_def1),
        repeated: &[
            ("", "const A = 1, ", 20_000, ""),
            ("", "class A extends ", 20_000, ""),
            ("", "{", 100_000, ""),
            ("<?php use A", "é", 3000, ""),
            ("<?php use AB", "é", 3000, ""),
            ("<?php const X = 'a', Y", "é", 3000, ""),
        ],
    },
    Hostile {
        extract: java::extract,
        ext: "java",
        snippets: &[
            "class",
            "class A extends",
            "class A { void f(",
            "class A { void f() { ",
            "@",
            "@KafkaListener(topics = ",
            "enum E { A(\"x\"",
            "enum E { A, B",
            "import static ;",
            "package",
            "class A { int x = ; }",
            "}}}} class B {}",
            "class A { String s = \"unterminated\n}",
            "interface I { @GetMapping( }",
            "class A { X y = OrderGrpc.newBlockingStub( ",
            "class A { void f() { kafkaTemplate.send( } }",
            "class A { void f() { rest.getForObject( } }",
            "record R(",
            "@interface",
            "class A<T extends B<C>> { <",
        ],
        junk: Junk::Pieces("class interface enum record @ { } ( ) [ ] < > ; , = . \" ' \\ / * \n static final KafkaListener(topics= send( Grpc newBlockingStub ImplBase extends GetMapping(\"/x\") ProducerRecord(\"t\" é 字 `", 0x2545_f491_4f6c_dd1d),
        repeated: &[],
    },
    Hostile {
        extract: kotlin::extract,
        ext: "kt",
        snippets: &[
            "class",
            "class A :",
            "class A(",
            "fun",
            "fun <T",
            "fun x(",
            "val",
            "val (",
            "val x =",
            "object",
            "companion object",
            "enum class E { A(\"x\"",
            "import",
            "import a.",
            "package",
            "@",
            "@KafkaListener(topics = [",
            "typealias",
            "}}} class B { fun ok() {} }",
            "constructor(",
            "class A { constructor(",
            "val s = \"$",
            "val s = \"${",
        ],
        junk: Junk::Pieces("class object companion fun val var enum @ { } ( ) [ ] < > : ; , = . \" \"\"\" ' \\ $ ${ / * \n const KafkaListener(topics=[ send( Grpc newBlockingStub ImplBase() GetMapping(\"/x\") é 字 ` by get() init", 0x9e37_79b9_7f4a_7c15),
        repeated: &[],
    },
    Hostile {
        extract: scala::extract,
        ext: "scala",
        snippets: &[
            "class",
            "class A extends",
            "class A(",
            "object A:",
            "def",
            "def f(",
            "val",
            "val x =",
            "import",
            "import a.{",
            "import a.b.",
            "package",
            "package a {",
            "enum E:\n  case",
            "end",
            "}}} object B { def ok = 1 }",
            "type",
            "given",
            "extension (",
            "private[",
            "@",
        ],
        junk: Junk::Pieces("class object trait def val var enum case end extends with @ { } ( ) [ ] : ; , = => . \" \"\"\" ' \\ $ s\" / * \n   Grpc stub( bindService( é 字 ` given import package _", 0xd1b5_4a32_d192_ed03),
        repeated: &[],
    },
];

/// Every truncated or malformed snippet extracts without a panic.
#[test]
fn truncated_and_malformed_files_do_not_panic() {
    for h in LANGUAGES {
        extract_each(h.extract, &format!("x.{}", h.ext), h.snippets);
    }
}

/// Seeded junk extracts without a panic and within [`extract_junk`]'s bounds, and long
/// repetitions extract without a panic.
#[test]
fn junk_input_does_not_panic() {
    for h in LANGUAGES {
        let path = format!("junk.{}", h.ext);
        match h.junk {
            Junk::Chars(alphabet, seed) => {
                extract_junk(h.extract, &path, &junk_chars64(alphabet, seed));
                extract_junk(h.extract, &path, &random_text(RANDOM_SEED));
            }
            Junk::Pieces(pieces, seed) => {
                extract_junk(h.extract, &path, &junk_pieces64(pieces, seed));
            }
        }
        for &(before, unit, times, after) in h.repeated {
            let text = format!("{before}{}{after}", unit.repeat(times));
            let _ = (h.extract)(&path, &text);
        }
    }
}
