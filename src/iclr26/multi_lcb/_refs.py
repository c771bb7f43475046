# ruff: noqa: E501 - program bodies are kept one statement group per line
"""Our reference STDIN/STDOUT solutions to 20 HumanEval problems in the 12 languages.

Each program is a per-language frame (reads all of STDIN into a list of lines ``L``, with helpers
``nums(line)`` for space-separated integers, ``b(bool)`` for ``true``/``false`` and ``plist(list)`` that
prints a list as its length and its items) around a per-problem body. TypeScript reuses the JavaScript
bodies inside a typed frame. The programs are ours, written against the codec's format (``_codec``).
"""

from __future__ import annotations

FRAMES = {
    "python": """import sys
L = sys.stdin.read().split("\\n") + ["", ""]
def nums(s): return [int(t) for t in s.split()]
def b(x): return "true" if x else "false"
def plist(v):
    print(len(v))
    print(" ".join(map(str, v)))
@BODY@
""",
    "cpp": """#include <bits/stdc++.h>
using namespace std;
typedef long long ll;
vector<string> L;
vector<ll> nums(const string& s) { vector<ll> v; stringstream ss(s); ll x; while (ss >> x) v.push_back(x); return v; }
string b(bool x) { return x ? "true" : "false"; }
void plist(const vector<ll>& v) {
  cout << v.size() << "\\n";
  for (size_t i = 0; i < v.size(); i++) { if (i) cout << " "; cout << v[i]; }
  cout << "\\n";
}
int main() {
  string line_;
  while (getline(cin, line_)) L.push_back(line_);
  L.push_back(""); L.push_back("");
  @BODY@
  return 0;
}
""",
    "java": """import java.util.*;
import java.io.*;
public class Main {
  static List<String> L = new ArrayList<>();
  static List<Long> nums(String s) {
    List<Long> r = new ArrayList<>();
    for (String t : s.trim().split("\\\\s+")) if (!t.isEmpty()) r.add(Long.parseLong(t));
    return r;
  }
  static String b(boolean x) { return x ? "true" : "false"; }
  static void plist(List<Long> v) {
    StringBuilder sb = new StringBuilder();
    for (int k = 0; k < v.size(); k++) { if (k > 0) sb.append(' '); sb.append(v.get(k)); }
    System.out.println(v.size());
    System.out.println(sb);
  }
  public static void main(String[] args) throws IOException {
    BufferedReader reader_ = new BufferedReader(new InputStreamReader(System.in));
    String line_;
    while ((line_ = reader_.readLine()) != null) L.add(line_);
    L.add(""); L.add("");
    @BODY@
  }
}
""",
    "csharp": """using System;
using System.Linq;
using System.Collections.Generic;
class Program {
  static List<string> L = new List<string>();
  static List<long> nums(string s) {
    return s.Split(new char[] {' ', '\\t'}, StringSplitOptions.RemoveEmptyEntries).Select(long.Parse).ToList();
  }
  static string b(bool x) { return x ? "true" : "false"; }
  static void plist(List<long> v) { Console.WriteLine(v.Count); Console.WriteLine(string.Join(" ", v)); }
  static void Main() {
    string line_;
    while ((line_ = Console.ReadLine()) != null) L.Add(line_);
    L.Add(""); L.Add("");
    @BODY@
  }
}
""",
    "javascript": """const L = require("fs").readFileSync(0, "utf8").split("\\n");
L.push("", "");
const nums = (s) => (s.trim() === "" ? [] : s.trim().split(/\\s+/).map(Number));
const b = (x) => (x ? "true" : "false");
const plist = (v) => { console.log(String(v.length)); console.log(v.join(" ")); };
@BODY@
""",
    "typescript": """declare const require: any;
const L: string[] = require("fs").readFileSync(0, "utf8").split("\\n");
L.push("", "");
const nums = (s: string): number[] => (s.trim() === "" ? [] : s.trim().split(/\\s+/).map(Number));
const b = (x: boolean): string => (x ? "true" : "false");
const plist = (v: number[]): void => { console.log(String(v.length)); console.log(v.join(" ")); };
@BODY@
""",
    "go": """package main

import (
	"bufio"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
)

var _ = sort.Ints
var L []string

func nums(s string) []int64 {
	f := strings.Fields(s)
	r := make([]int64, len(f))
	for k, t := range f {
		r[k], _ = strconv.ParseInt(t, 10, 64)
	}
	return r
}

func b(x bool) string {
	if x {
		return "true"
	}
	return "false"
}

func plist(v []int64) {
	s := make([]string, len(v))
	for k, x := range v {
		s[k] = strconv.FormatInt(x, 10)
	}
	fmt.Println(len(v))
	fmt.Println(strings.Join(s, " "))
}

func atoi(s string) int64 {
	x, _ := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	return x
}

func main() {
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for sc.Scan() {
		L = append(L, sc.Text())
	}
	L = append(L, "", "")
	@BODY@
}
""",
    "rust": """#![allow(unused, non_snake_case)]
use std::collections::*;
use std::io::*;
fn b(x: bool) -> &'static str { if x { "true" } else { "false" } }
fn nums(s: &str) -> Vec<i64> { s.split_whitespace().map(|t| t.parse().unwrap()).collect() }
fn num(s: &str) -> i64 { s.trim().parse().unwrap() }
fn plist(v: &[i64]) {
    println!("{}", v.len());
    println!("{}", v.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(" "));
}
fn main() {
    let mut input_ = String::new();
    stdin().read_to_string(&mut input_).unwrap();
    let mut L: Vec<String> = input_.split('\\n').map(|x| x.to_string()).collect();
    L.push(String::new());
    L.push(String::new());
    @BODY@
}
""",
    "ruby": """L = STDIN.read.split("\\n", -1) + ["", ""]
def nums(s) = s.split.map(&:to_i)
def b(x) = x ? "true" : "false"
def plist(v)
  puts v.size
  puts v.join(" ")
end
@BODY@
""",
    "php": """<?php
$L = explode("\\n", stream_get_contents(STDIN));
$L[] = "";
$L[] = "";
function nums($s) { $t = trim($s); return $t === "" ? [] : array_map('intval', preg_split('/\\s+/', $t)); }
function b($x) { return $x ? "true" : "false"; }
function plist($v) { echo count($v), "\\n", implode(" ", $v), "\\n"; }
@BODY@
""",
    "kotlin": """fun nums(s: String): List<Long> = s.trim().split(Regex("\\\\s+")).filter { it.isNotEmpty() }.map { it.toLong() }
fun b(x: Boolean) = if (x) "true" else "false"
fun plist(v: List<Long>) { println(v.size); println(v.joinToString(" ")) }
fun main() {
    val L = generateSequence(::readLine).toMutableList()
    L.add(""); L.add("")
    @BODY@
}
""",
    "scala": """object Main {
  def nums(s: String): List[Long] = s.trim.split("\\\\s+").filter(_.nonEmpty).map(_.toLong).toList
  def b(x: Boolean): String = if (x) "true" else "false"
  def plist(v: Seq[Long]): Unit = { println(v.size); println(v.mkString(" ")) }
  def main(args: Array[String]): Unit = {
    val L = scala.io.Source.stdin.getLines().toVector ++ Vector("", "")
    @BODY@
  }
}
""",
}

# Per problem: language -> body. TypeScript uses the JavaScript body.
BODIES: dict[str, dict[str, str]] = {
    "HumanEval/3": {
        "python": "s = 0\nok = False\nfor x in nums(L[1]):\n    s += x\n    ok = ok or s < 0\nprint(b(ok))",
        "cpp": "ll s = 0; bool ok = false; for (ll x : nums(L[1])) { s += x; if (s < 0) ok = true; } cout << b(ok) << endl;",
        "java": "long s = 0; boolean ok = false; for (long x : nums(L.get(1))) { s += x; if (s < 0) ok = true; } System.out.println(b(ok));",
        "csharp": "long s = 0; bool ok = false; foreach (var x in nums(L[1])) { s += x; if (s < 0) ok = true; } Console.WriteLine(b(ok));",
        "javascript": "let s = 0, ok = false; for (const x of nums(L[1])) { s += x; if (s < 0) ok = true; } console.log(b(ok));",
        "go": "var s int64\nok := false\nfor _, x := range nums(L[1]) {\n\ts += x\n\tif s < 0 {\n\t\tok = true\n\t}\n}\nfmt.Println(b(ok))",
        "rust": 'let mut s = 0i64; let mut ok = false; for x in nums(&L[1]) { s += x; if s < 0 { ok = true; } } println!("{}", b(ok));',
        "ruby": "s = 0\nok = false\nnums(L[1]).each { |x| s += x; ok ||= s < 0 }\nputs b(ok)",
        "php": '$s = 0; $ok = false; foreach (nums($L[1]) as $x) { $s += $x; if ($s < 0) $ok = true; } echo b($ok), "\\n";',
        "kotlin": "var s = 0L; var ok = false; for (x in nums(L[1])) { s += x; if (s < 0) ok = true }; println(b(ok))",
        "scala": "var s = 0L; var ok = false; for (x <- nums(L(1))) { s += x; if (s < 0) ok = true }; println(b(ok))",
    },
    "HumanEval/13": {
        "python": "import math\nprint(math.gcd(int(L[0]), int(L[1])))",
        "cpp": "cout << __gcd(stoll(L[0]), stoll(L[1])) << endl;",
        "java": "long a = Long.parseLong(L.get(0).trim()), c = Long.parseLong(L.get(1).trim()); while (c != 0) { long t = a % c; a = c; c = t; } System.out.println(a);",
        "csharp": "long a = long.Parse(L[0]), c = long.Parse(L[1]); while (c != 0) { long t = a % c; a = c; c = t; } Console.WriteLine(a);",
        "javascript": "let a = Number(L[0]), c = Number(L[1]); while (c !== 0) { const t = a % c; a = c; c = t; } console.log(a);",
        "go": "a, c := atoi(L[0]), atoi(L[1])\nfor c != 0 {\n\ta, c = c, a%c\n}\nfmt.Println(a)",
        "rust": 'let (mut a, mut c) = (num(&L[0]), num(&L[1])); while c != 0 { let t = a % c; a = c; c = t; } println!("{}", a);',
        "ruby": "puts L[0].to_i.gcd(L[1].to_i)",
        "php": '$a = intval($L[0]); $c = intval($L[1]); while ($c != 0) { $t = $a % $c; $a = $c; $c = $t; } echo $a, "\\n";',
        "kotlin": "var a = L[0].trim().toLong(); var c = L[1].trim().toLong(); while (c != 0L) { val t = a % c; a = c; c = t }; println(a)",
        "scala": "println(BigInt(L(0).trim.toLong).gcd(BigInt(L(1).trim.toLong)))",
    },
    "HumanEval/15": {
        "python": 'print(" ".join(str(i) for i in range(int(L[0]) + 1)))',
        "cpp": 'int n = stoi(L[0]); for (int i = 0; i <= n; i++) cout << (i ? " " : "") << i; cout << endl;',
        "java": "int n = Integer.parseInt(L.get(0).trim()); StringBuilder sb = new StringBuilder(); for (int i = 0; i <= n; i++) { if (i > 0) sb.append(' '); sb.append(i); } System.out.println(sb);",
        "csharp": 'int n = int.Parse(L[0]); Console.WriteLine(string.Join(" ", Enumerable.Range(0, n + 1)));',
        "javascript": 'const n = Number(L[0]); console.log(Array.from({ length: n + 1 }, (_, i) => i).join(" "));',
        "go": 'n := atoi(L[0])\nparts := []string{}\nfor i := int64(0); i <= n; i++ {\n\tparts = append(parts, strconv.FormatInt(i, 10))\n}\nfmt.Println(strings.Join(parts, " "))',
        "rust": 'let n = num(&L[0]); println!("{}", (0..=n).map(|i| i.to_string()).collect::<Vec<_>>().join(" "));',
        "ruby": 'puts (0..L[0].to_i).to_a.join(" ")',
        "php": 'echo implode(" ", range(0, intval($L[0]))), "\\n";',
        "kotlin": 'println((0..L[0].trim().toInt()).joinToString(" "))',
        "scala": 'println((0 to L(0).trim.toInt).mkString(" "))',
    },
    "HumanEval/16": {
        "python": "print(len(set(L[0].lower())))",
        "cpp": "set<char> st; for (char ch : L[0]) st.insert(tolower(ch)); cout << st.size() << endl;",
        "java": "Set<Character> st = new HashSet<>(); for (char ch : L.get(0).toLowerCase().toCharArray()) st.add(ch); System.out.println(st.size());",
        "csharp": "Console.WriteLine(L[0].ToLowerInvariant().Distinct().Count());",
        "javascript": "console.log(new Set(L[0].toLowerCase()).size);",
        "go": "seen := map[rune]bool{}\nfor _, ch := range strings.ToLower(L[0]) {\n\tseen[ch] = true\n}\nfmt.Println(len(seen))",
        "rust": 'let st: HashSet<char> = L[0].to_lowercase().chars().collect(); println!("{}", st.len());',
        "ruby": "puts L[0].downcase.chars.uniq.size",
        "php": 'echo $L[0] === "" ? 0 : count(array_unique(str_split(strtolower($L[0])))), "\\n";',
        "kotlin": "println(L[0].toLowerCase().toSet().size)",
        "scala": "println(L(0).toLowerCase.toSet.size)",
    },
    "HumanEval/23": {
        "python": "print(len(L[0]))",
        "cpp": "cout << L[0].size() << endl;",
        "java": "System.out.println(L.get(0).length());",
        "csharp": "Console.WriteLine(L[0].Length);",
        "javascript": "console.log(L[0].length);",
        "go": "fmt.Println(len(L[0]))",
        "rust": 'println!("{}", L[0].chars().count());',
        "ruby": "puts L[0].size",
        "php": 'echo strlen($L[0]), "\\n";',
        "kotlin": "println(L[0].length)",
        "scala": "println(L(0).length)",
    },
    "HumanEval/24": {
        "python": "n = int(L[0])\nprint(max(d for d in range(1, n) if n % d == 0))",
        "cpp": "ll n = stoll(L[0]); for (ll d = n - 1; d >= 1; d--) if (n % d == 0) { cout << d << endl; break; }",
        "java": "long n = Long.parseLong(L.get(0).trim()); for (long d = n - 1; d >= 1; d--) if (n % d == 0) { System.out.println(d); break; }",
        "csharp": "long n = long.Parse(L[0]); for (long d = n - 1; d >= 1; d--) if (n % d == 0) { Console.WriteLine(d); break; }",
        "javascript": "const n = Number(L[0]); for (let d = n - 1; d >= 1; d--) if (n % d === 0) { console.log(d); break; }",
        "go": "n := atoi(L[0])\nfor d := n - 1; d >= 1; d-- {\n\tif n%d == 0 {\n\t\tfmt.Println(d)\n\t\tbreak\n\t}\n}",
        "rust": 'let n = num(&L[0]); let d = (1..n).rev().find(|d| n % d == 0).unwrap(); println!("{}", d);',
        "ruby": "n = L[0].to_i\nputs (1...n).select { |d| n % d == 0 }.max",
        "php": '$n = intval($L[0]); for ($d = $n - 1; $d >= 1; $d--) if ($n % $d == 0) { echo $d, "\\n"; break; }',
        "kotlin": "val n = L[0].trim().toLong(); println((n - 1 downTo 1).first { n % it == 0L })",
        "scala": "val n = L(0).trim.toLong; println((n - 1 to 1 by -1).find(n % _ == 0).get)",
    },
    "HumanEval/27": {
        "python": "print(L[0].swapcase())",
        "cpp": "string s = L[0]; for (auto& ch : s) ch = isupper(ch) ? tolower(ch) : toupper(ch); cout << s << endl;",
        "java": "StringBuilder sb = new StringBuilder(); for (char ch : L.get(0).toCharArray()) sb.append(Character.isUpperCase(ch) ? Character.toLowerCase(ch) : Character.toUpperCase(ch)); System.out.println(sb);",
        "csharp": "Console.WriteLine(new string(L[0].Select(ch => char.IsUpper(ch) ? char.ToLower(ch) : char.ToUpper(ch)).ToArray()));",
        "javascript": 'console.log([...L[0]].map((ch) => (ch === ch.toUpperCase() ? ch.toLowerCase() : ch.toUpperCase())).join(""));',
        "go": "out := []rune{}\nfor _, ch := range L[0] {\n\tif strings.ToUpper(string(ch)) == string(ch) {\n\t\tout = append(out, []rune(strings.ToLower(string(ch)))...)\n\t} else {\n\t\tout = append(out, []rune(strings.ToUpper(string(ch)))...)\n\t}\n}\nfmt.Println(string(out))",
        "rust": 'let s: String = L[0].chars().map(|c| if c.is_uppercase() { c.to_ascii_lowercase() } else { c.to_ascii_uppercase() }).collect(); println!("{}", s);',
        "ruby": "puts L[0].swapcase",
        "php": '$s = $L[0]; $o = ""; for ($i = 0; $i < strlen($s); $i++) { $c = $s[$i]; $o .= ctype_upper($c) ? strtolower($c) : strtoupper($c); } echo $o, "\\n";',
        "kotlin": 'println(L[0].map { if (it.isUpperCase()) it.toLowerCase() else it.toUpperCase() }.joinToString(""))',
        "scala": "println(L(0).map(c => if (c.isUpper) c.toLower else c.toUpper))",
    },
    "HumanEval/30": {
        "python": "plist([x for x in nums(L[1]) if x > 0])",
        "cpp": "vector<ll> r; for (ll x : nums(L[1])) if (x > 0) r.push_back(x); plist(r);",
        "java": "List<Long> r = new ArrayList<>(); for (long x : nums(L.get(1))) if (x > 0) r.add(x); plist(r);",
        "csharp": "plist(nums(L[1]).Where(x => x > 0).ToList());",
        "javascript": "plist(nums(L[1]).filter((x) => x > 0));",
        "go": "r := []int64{}\nfor _, x := range nums(L[1]) {\n\tif x > 0 {\n\t\tr = append(r, x)\n\t}\n}\nplist(r)",
        "rust": "let r: Vec<i64> = nums(&L[1]).into_iter().filter(|&x| x > 0).collect(); plist(&r);",
        "ruby": "plist(nums(L[1]).select { |x| x > 0 })",
        "php": "plist(array_values(array_filter(nums($L[1]), fn($x) => $x > 0)));",
        "kotlin": "plist(nums(L[1]).filter { it > 0 })",
        "scala": "plist(nums(L(1)).filter(_ > 0))",
    },
    "HumanEval/34": {
        "python": "plist(sorted(set(nums(L[1]))))",
        "cpp": "set<ll> st; for (ll x : nums(L[1])) st.insert(x); plist(vector<ll>(st.begin(), st.end()));",
        "java": "plist(new ArrayList<>(new TreeSet<>(nums(L.get(1)))));",
        "csharp": "plist(nums(L[1]).Distinct().OrderBy(x => x).ToList());",
        "javascript": "plist([...new Set(nums(L[1]))].sort((x, y) => x - y));",
        "go": "seen := map[int64]bool{}\nr := []int64{}\nfor _, x := range nums(L[1]) {\n\tif !seen[x] {\n\t\tseen[x] = true\n\t\tr = append(r, x)\n\t}\n}\nsort.Slice(r, func(i, j int) bool { return r[i] < r[j] })\nplist(r)",
        "rust": "let st: BTreeSet<i64> = nums(&L[1]).into_iter().collect(); let r: Vec<i64> = st.into_iter().collect(); plist(&r);",
        "ruby": "plist(nums(L[1]).uniq.sort)",
        "php": "$v = array_values(array_unique(nums($L[1]))); sort($v); plist($v);",
        "kotlin": "plist(nums(L[1]).distinct().sorted())",
        "scala": "plist(nums(L(1)).distinct.sorted)",
    },
    "HumanEval/35": {
        "python": "print(max(nums(L[1])))",
        "cpp": "auto v = nums(L[1]); cout << *max_element(v.begin(), v.end()) << endl;",
        "java": "System.out.println(Collections.max(nums(L.get(1))));",
        "csharp": "Console.WriteLine(nums(L[1]).Max());",
        "javascript": "console.log(Math.max(...nums(L[1])));",
        "go": "v := nums(L[1])\nm := v[0]\nfor _, x := range v {\n\tif x > m {\n\t\tm = x\n\t}\n}\nfmt.Println(m)",
        "rust": 'println!("{}", nums(&L[1]).into_iter().max().unwrap());',
        "ruby": "puts nums(L[1]).max",
        "php": 'echo max(nums($L[1])), "\\n";',
        "kotlin": "println(nums(L[1]).max())",
        "scala": "println(nums(L(1)).max)",
    },
    "HumanEval/42": {
        "python": "plist([x + 1 for x in nums(L[1])])",
        "cpp": "auto v = nums(L[1]); for (auto& x : v) x++; plist(v);",
        "java": "List<Long> r = new ArrayList<>(); for (long x : nums(L.get(1))) r.add(x + 1); plist(r);",
        "csharp": "plist(nums(L[1]).Select(x => x + 1).ToList());",
        "javascript": "plist(nums(L[1]).map((x) => x + 1));",
        "go": "v := nums(L[1])\nfor i := range v {\n\tv[i]++\n}\nplist(v)",
        "rust": "let r: Vec<i64> = nums(&L[1]).iter().map(|x| x + 1).collect(); plist(&r);",
        "ruby": "plist(nums(L[1]).map { |x| x + 1 })",
        "php": "plist(array_map(fn($x) => $x + 1, nums($L[1])));",
        "kotlin": "plist(nums(L[1]).map { it + 1 })",
        "scala": "plist(nums(L(1)).map(_ + 1))",
    },
    "HumanEval/48": {
        "python": "print(b(L[0] == L[0][::-1]))",
        "cpp": "string s = L[0]; cout << b(s == string(s.rbegin(), s.rend())) << endl;",
        "java": "String s = L.get(0); System.out.println(b(s.equals(new StringBuilder(s).reverse().toString())));",
        "csharp": "string s = L[0]; Console.WriteLine(b(s == new string(s.Reverse().ToArray())));",
        "javascript": 'const s = L[0]; console.log(b(s === [...s].reverse().join("")));',
        "go": "r := []rune(L[0])\nok := true\nfor i := 0; i < len(r)/2; i++ {\n\tif r[i] != r[len(r)-1-i] {\n\t\tok = false\n\t}\n}\nfmt.Println(b(ok))",
        "rust": 'let s = &L[0]; println!("{}", b(s.chars().rev().collect::<String>() == *s));',
        "ruby": "puts b(L[0] == L[0].reverse)",
        "php": 'echo b($L[0] === strrev($L[0])), "\\n";',
        "kotlin": "println(b(L[0] == L[0].reversed()))",
        "scala": "println(b(L(0) == L(0).reverse))",
    },
    "HumanEval/52": {
        "python": "t = int(L[2])\nprint(b(all(x < t for x in nums(L[1]))))",
        "cpp": "ll t = stoll(L[2]); bool ok = true; for (ll x : nums(L[1])) if (x >= t) ok = false; cout << b(ok) << endl;",
        "java": "long t = Long.parseLong(L.get(2).trim()); boolean ok = true; for (long x : nums(L.get(1))) if (x >= t) ok = false; System.out.println(b(ok));",
        "csharp": "long t = long.Parse(L[2]); Console.WriteLine(b(nums(L[1]).All(x => x < t)));",
        "javascript": "const t = Number(L[2]); console.log(b(nums(L[1]).every((x) => x < t)));",
        "go": "t := atoi(L[2])\nok := true\nfor _, x := range nums(L[1]) {\n\tif x >= t {\n\t\tok = false\n\t}\n}\nfmt.Println(b(ok))",
        "rust": 'let t = num(&L[2]); println!("{}", b(nums(&L[1]).iter().all(|&x| x < t)));',
        "ruby": "t = L[2].to_i\nputs b(nums(L[1]).all? { |x| x < t })",
        "php": '$t = intval($L[2]); $ok = true; foreach (nums($L[1]) as $x) if ($x >= $t) $ok = false; echo b($ok), "\\n";',
        "kotlin": "val t = L[2].trim().toLong(); println(b(nums(L[1]).all { it < t }))",
        "scala": "val t = L(2).trim.toLong; println(b(nums(L(1)).forall(_ < t)))",
    },
    "HumanEval/53": {
        "python": "print(int(L[0]) + int(L[1]))",
        "cpp": "cout << stoll(L[0]) + stoll(L[1]) << endl;",
        "java": "System.out.println(Long.parseLong(L.get(0).trim()) + Long.parseLong(L.get(1).trim()));",
        "csharp": "Console.WriteLine(long.Parse(L[0]) + long.Parse(L[1]));",
        "javascript": "console.log(Number(L[0]) + Number(L[1]));",
        "go": "fmt.Println(atoi(L[0]) + atoi(L[1]))",
        "rust": 'println!("{}", num(&L[0]) + num(&L[1]));',
        "ruby": "puts L[0].to_i + L[1].to_i",
        "php": 'echo intval($L[0]) + intval($L[1]), "\\n";',
        "kotlin": "println(L[0].trim().toLong() + L[1].trim().toLong())",
        "scala": "println(L(0).trim.toLong + L(1).trim.toLong)",
    },
    "HumanEval/55": {
        "python": "a, c = 0, 1\nfor _ in range(int(L[0])):\n    a, c = c, a + c\nprint(a)",
        "cpp": "ll a = 0, c = 1; int n = stoi(L[0]); for (int i = 0; i < n; i++) { ll t = a + c; a = c; c = t; } cout << a << endl;",
        "java": "long a = 0, c = 1; int n = Integer.parseInt(L.get(0).trim()); for (int i = 0; i < n; i++) { long t = a + c; a = c; c = t; } System.out.println(a);",
        "csharp": "long a = 0, c = 1; int n = int.Parse(L[0]); for (int i = 0; i < n; i++) { long t = a + c; a = c; c = t; } Console.WriteLine(a);",
        "javascript": "let a = 0, c = 1; const n = Number(L[0]); for (let i = 0; i < n; i++) [a, c] = [c, a + c]; console.log(a);",
        "go": "a, c := int64(0), int64(1)\nfor i := int64(0); i < atoi(L[0]); i++ {\n\ta, c = c, a+c\n}\nfmt.Println(a)",
        "rust": 'let (mut a, mut c) = (0i64, 1i64); for _ in 0..num(&L[0]) { let t = a + c; a = c; c = t; } println!("{}", a);',
        "ruby": "a, c = 0, 1\nL[0].to_i.times { a, c = c, a + c }\nputs a",
        "php": '$a = 0; $c = 1; for ($i = 0; $i < intval($L[0]); $i++) { $t = $a + $c; $a = $c; $c = $t; } echo $a, "\\n";',
        "kotlin": "var a = 0L; var c = 1L; repeat(L[0].trim().toInt()) { val t = a + c; a = c; c = t }; println(a)",
        "scala": "var a = 0L; var c = 1L; for (_ <- 0 until L(0).trim.toInt) { val t = a + c; a = c; c = t }; println(a)",
    },
    "HumanEval/60": {
        "python": "n = int(L[0])\nprint(n * (n + 1) // 2)",
        "cpp": "ll n = stoll(L[0]); cout << n * (n + 1) / 2 << endl;",
        "java": "long n = Long.parseLong(L.get(0).trim()); System.out.println(n * (n + 1) / 2);",
        "csharp": "long n = long.Parse(L[0]); Console.WriteLine(n * (n + 1) / 2);",
        "javascript": "const n = Number(L[0]); console.log((n * (n + 1)) / 2);",
        "go": "n := atoi(L[0])\nfmt.Println(n * (n + 1) / 2)",
        "rust": 'let n = num(&L[0]); println!("{}", n * (n + 1) / 2);',
        "ruby": "n = L[0].to_i\nputs n * (n + 1) / 2",
        "php": '$n = intval($L[0]); echo intdiv($n * ($n + 1), 2), "\\n";',
        "kotlin": "val n = L[0].trim().toLong(); println(n * (n + 1) / 2)",
        "scala": "val n = L(0).trim.toLong; println(n * (n + 1) / 2)",
    },
    "HumanEval/63": {
        "python": "f = [0, 0, 1]\nn = int(L[0])\nwhile len(f) <= n:\n    f.append(f[-1] + f[-2] + f[-3])\nprint(f[n])",
        "cpp": "int n = stoi(L[0]); vector<ll> f = {0, 0, 1}; while ((int)f.size() <= n) f.push_back(f[f.size() - 1] + f[f.size() - 2] + f[f.size() - 3]); cout << f[n] << endl;",
        "java": "int n = Integer.parseInt(L.get(0).trim()); long[] f = new long[Math.max(3, n + 1)]; f[2] = 1; for (int i = 3; i <= n; i++) f[i] = f[i - 1] + f[i - 2] + f[i - 3]; System.out.println(f[n]);",
        "csharp": "int n = int.Parse(L[0]); var f = new long[Math.Max(3, n + 1)]; f[2] = 1; for (int i = 3; i <= n; i++) f[i] = f[i - 1] + f[i - 2] + f[i - 3]; Console.WriteLine(f[n]);",
        "javascript": "const n = Number(L[0]); const f = [0, 0, 1]; for (let i = 3; i <= n; i++) f.push(f[i - 1] + f[i - 2] + f[i - 3]); console.log(f[n]);",
        "go": "n := atoi(L[0])\nf := []int64{0, 0, 1}\nfor i := int64(3); i <= n; i++ {\n\tf = append(f, f[i-1]+f[i-2]+f[i-3])\n}\nfmt.Println(f[n])",
        "rust": 'let n = num(&L[0]) as usize; let mut f = vec![0i64, 0, 1]; for i in 3..=n { let x = f[i - 1] + f[i - 2] + f[i - 3]; f.push(x); } println!("{}", f[n]);',
        "ruby": "n = L[0].to_i\nf = [0, 0, 1]\nf << f[-1] + f[-2] + f[-3] while f.size <= n\nputs f[n]",
        "php": '$n = intval($L[0]); $f = [0, 0, 1]; for ($i = 3; $i <= $n; $i++) $f[] = $f[$i - 1] + $f[$i - 2] + $f[$i - 3]; echo $f[$n], "\\n";',
        "kotlin": "val n = L[0].trim().toInt(); val f = mutableListOf(0L, 0L, 1L); for (i in 3..n) f.add(f[i - 1] + f[i - 2] + f[i - 3]); println(f[n])",
        "scala": "val n = L(0).trim.toInt; val f = scala.collection.mutable.ArrayBuffer(0L, 0L, 1L); for (i <- 3 to n) f += f(i - 1) + f(i - 2) + f(i - 3); println(f(n))",
    },
    "HumanEval/66": {
        "python": "print(sum(ord(c) for c in L[0] if c.isupper()))",
        "cpp": "ll s = 0; for (char ch : L[0]) if (isupper(ch)) s += ch; cout << s << endl;",
        "java": "long s = 0; for (char ch : L.get(0).toCharArray()) if (Character.isUpperCase(ch)) s += ch; System.out.println(s);",
        "csharp": "Console.WriteLine(L[0].Where(char.IsUpper).Sum(ch => (long)ch));",
        "javascript": 'let s = 0; for (const ch of L[0]) if (ch >= "A" && ch <= "Z") s += ch.charCodeAt(0); console.log(s);',
        "go": "s := 0\nfor _, ch := range L[0] {\n\tif ch >= 'A' && ch <= 'Z' {\n\t\ts += int(ch)\n\t}\n}\nfmt.Println(s)",
        "rust": 'let s: u32 = L[0].chars().filter(|c| c.is_ascii_uppercase()).map(|c| c as u32).sum(); println!("{}", s);',
        "ruby": "puts L[0].chars.select { |c| c =~ /[A-Z]/ }.sum(&:ord)",
        "php": '$s = 0; foreach (str_split($L[0]) as $c) if (ctype_upper($c)) $s += ord($c); echo $s, "\\n";',
        "kotlin": "println(L[0].filter { it in 'A'..'Z' }.sumBy { it.toInt() })",
        "scala": "println(L(0).filter(_.isUpper).map(_.toInt).sum)",
    },
    "HumanEval/150": {
        "python": "n, x, y = int(L[0]), int(L[1]), int(L[2])\nprime = n > 1 and all(n % d for d in range(2, n))\nprint(x if prime else y)",
        "cpp": "ll n = stoll(L[0]), x = stoll(L[1]), y = stoll(L[2]); bool p = n > 1; for (ll d = 2; d * d <= n; d++) if (n % d == 0) p = false; cout << (p ? x : y) << endl;",
        "java": "long n = Long.parseLong(L.get(0).trim()), x = Long.parseLong(L.get(1).trim()), y = Long.parseLong(L.get(2).trim()); boolean p = n > 1; for (long d = 2; d * d <= n; d++) if (n % d == 0) p = false; System.out.println(p ? x : y);",
        "csharp": "long n = long.Parse(L[0]), x = long.Parse(L[1]), y = long.Parse(L[2]); bool p = n > 1; for (long d = 2; d * d <= n; d++) if (n % d == 0) p = false; Console.WriteLine(p ? x : y);",
        "javascript": "const [n, x, y] = [Number(L[0]), Number(L[1]), Number(L[2])]; let p = n > 1; for (let d = 2; d * d <= n; d++) if (n % d === 0) p = false; console.log(p ? x : y);",
        "go": "n, x, y := atoi(L[0]), atoi(L[1]), atoi(L[2])\np := n > 1\nfor d := int64(2); d*d <= n; d++ {\n\tif n%d == 0 {\n\t\tp = false\n\t}\n}\nif p {\n\tfmt.Println(x)\n} else {\n\tfmt.Println(y)\n}",
        "rust": 'let (n, x, y) = (num(&L[0]), num(&L[1]), num(&L[2])); let p = n > 1 && (2..n).take_while(|d| d * d <= n).all(|d| n % d != 0); println!("{}", if p { x } else { y });',
        "ruby": "n, x, y = L[0].to_i, L[1].to_i, L[2].to_i\np = n > 1 && (2...n).none? { |d| n % d == 0 }\nputs(p ? x : y)",
        "php": '$n = intval($L[0]); $x = intval($L[1]); $y = intval($L[2]); $p = $n > 1; for ($d = 2; $d * $d <= $n; $d++) if ($n % $d == 0) $p = false; echo $p ? $x : $y, "\\n";',
        "kotlin": "val n = L[0].trim().toLong(); val x = L[1].trim().toLong(); val y = L[2].trim().toLong(); val p = n > 1 && (2 until n).none { n % it == 0L }; println(if (p) x else y)",
        "scala": "val n = L(0).trim.toLong; val x = L(1).trim.toLong; val y = L(2).trim.toLong; val p = n > 1 && (2L until n).forall(n % _ != 0); println(if (p) x else y)",
    },
    "HumanEval/157": {
        "python": "a, c, d = int(L[0]), int(L[1]), int(L[2])\nprint(b(a*a == c*c + d*d or c*c == a*a + d*d or d*d == a*a + c*c))",
        "cpp": "ll a = stoll(L[0]), c = stoll(L[1]), d = stoll(L[2]); cout << b(a*a == c*c + d*d || c*c == a*a + d*d || d*d == a*a + c*c) << endl;",
        "java": "long a = Long.parseLong(L.get(0).trim()), c = Long.parseLong(L.get(1).trim()), d = Long.parseLong(L.get(2).trim()); System.out.println(b(a*a == c*c + d*d || c*c == a*a + d*d || d*d == a*a + c*c));",
        "csharp": "long a = long.Parse(L[0]), c = long.Parse(L[1]), d = long.Parse(L[2]); Console.WriteLine(b(a*a == c*c + d*d || c*c == a*a + d*d || d*d == a*a + c*c));",
        "javascript": "const [a, c, d] = [Number(L[0]), Number(L[1]), Number(L[2])]; console.log(b(a*a === c*c + d*d || c*c === a*a + d*d || d*d === a*a + c*c));",
        "go": "a, c, d := atoi(L[0]), atoi(L[1]), atoi(L[2])\nfmt.Println(b(a*a == c*c+d*d || c*c == a*a+d*d || d*d == a*a+c*c))",
        "rust": 'let (a, c, d) = (num(&L[0]), num(&L[1]), num(&L[2])); println!("{}", b(a*a == c*c + d*d || c*c == a*a + d*d || d*d == a*a + c*c));',
        "ruby": "a, c, d = L[0].to_i, L[1].to_i, L[2].to_i\nputs b(a*a == c*c + d*d || c*c == a*a + d*d || d*d == a*a + c*c)",
        "php": '$a = intval($L[0]); $c = intval($L[1]); $d = intval($L[2]); echo b($a*$a == $c*$c + $d*$d || $c*$c == $a*$a + $d*$d || $d*$d == $a*$a + $c*$c), "\\n";',
        "kotlin": "val a = L[0].trim().toLong(); val c = L[1].trim().toLong(); val d = L[2].trim().toLong(); println(b(a*a == c*c + d*d || c*c == a*a + d*d || d*d == a*a + c*c))",
        "scala": "val a = L(0).trim.toLong; val c = L(1).trim.toLong; val d = L(2).trim.toLong; println(b(a*a == c*c + d*d || c*c == a*a + d*d || d*d == a*a + c*c))",
    },
}


def reference_program(task_id: str, language: str) -> str:
    """Our reference program for ``task_id`` in ``language`` (one of the 12)."""
    from ._toolchains import get_multi_language

    lang = get_multi_language(language)
    if task_id not in BODIES:
        raise ValueError(f"task_id must be one of {sorted(BODIES)}, got {task_id!r}")
    body = BODIES[task_id]["javascript" if lang == "typescript" else lang]
    return FRAMES[lang].replace("@BODY@", body)
