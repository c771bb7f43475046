# ruff: noqa: E501 - the frames keep each helper function on one line
"""Our reference STDIN/STDOUT solutions to the converted HumanEval problems in the 12 languages.

Each program is a per-language frame (reads all of STDIN into a list of lines ``L``, with helpers
``nums(line)`` for space-separated integers, ``b(bool)`` for ``true``/``false``, ``fl(double)`` for the
shortest text that reads back as the same double (as Python's ``repr``; LiveCodeBench's grader compares
numbers as decimals) and ``plist(list)`` that prints a list as its length and its items) around a per-problem body. The bodies live in
``references/<language>.txt``, one per problem after a ``@@@ <task id>`` line. TypeScript reuses the
JavaScript bodies inside a typed frame. The programs are ours, written against the codec's format
(``_codec``).
"""

from __future__ import annotations

from functools import cache
from importlib.resources import files

from ._toolchains import ORDER, get_multi_language

#: The languages with a file of bodies (TypeScript reads JavaScript's).
BODY_LANGUAGES = tuple(lang for lang in ORDER if lang != "typescript")

FRAMES = {
    "python": """import sys
L = sys.stdin.read().split("\\n") + ["", ""]
def nums(s): return [int(t) for t in s.split()]
def b(x): return "true" if x else "false"
def fl(x): return repr(float(x))
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
string fl(double x) { char buf_[64]; auto r_ = to_chars(buf_, buf_ + 64, x); return string(buf_, r_.ptr); }
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
  static String fl(double x) {
    for (int p = 1; ; p++) {
      java.math.BigDecimal d = new java.math.BigDecimal(x).round(new java.math.MathContext(p));
      if (p < 17 && d.doubleValue() != x) continue;
      double a = Math.abs(x);
      return a == 0 || (a >= 1e-4 && a < 1e16) ? d.toPlainString() : d.toString();
    }
  }
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
  static string fl(double x) {
    var inv = System.Globalization.CultureInfo.InvariantCulture;
    for (int p = 1; p < 17; p++) {
      string s = x.ToString("G" + p, inv);
      double y;
      if (double.TryParse(s, System.Globalization.NumberStyles.Float, inv, out y) && y == x) return s;
    }
    return x.ToString("G17", inv);
  }
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
const fl = (x) => String(x);
const plist = (v) => { console.log(String(v.length)); console.log(v.join(" ")); };
@BODY@
""",
    "typescript": """declare const require: any;
const L: string[] = require("fs").readFileSync(0, "utf8").split("\\n");
L.push("", "");
const nums = (s: string): number[] => (s.trim() === "" ? [] : s.trim().split(/\\s+/).map(Number));
const b = (x: boolean): string => (x ? "true" : "false");
const fl = (x: number): string => String(x);
const plist = (v: number[]): void => { console.log(String(v.length)); console.log(v.join(" ")); };
@BODY@
""",
    "go": """package main

import (
	"bufio"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
)

var _, _, _, _ = sort.Ints, math.Abs, md5.Sum, hex.EncodeToString
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

func fl(x float64) string {
	return strconv.FormatFloat(x, 'g', -1, 64)
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
fn fl(x: f64) -> String { format!("{:?}", x) }
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
def fl(x) = x.to_f.to_s
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
function fl($x) { return var_export((float)$x, true); }
function plist($v) { echo count($v), "\\n", implode(" ", $v), "\\n"; }
@BODY@
""",
    "kotlin": """fun nums(s: String): List<Long> = s.trim().split(Regex("\\\\s+")).filter { it.isNotEmpty() }.map { it.toLong() }
fun b(x: Boolean) = if (x) "true" else "false"
fun fl(x: Double): String {
    var p = 1
    while (true) {
        val d = java.math.BigDecimal(x).round(java.math.MathContext(p))
        if (p >= 17 || d.toDouble() == x) {
            val a = Math.abs(x)
            return if (a == 0.0 || (a >= 1e-4 && a < 1e16)) d.toPlainString() else d.toString()
        }
        p++
    }
}
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
  def fl(x: Double): String = {
    def at(p: Int) = new java.math.BigDecimal(x).round(new java.math.MathContext(p))
    val d = (1 to 16).map(at).find(_.doubleValue == x).getOrElse(at(17))
    val a = math.abs(x)
    if (a == 0 || (a >= 1e-4 && a < 1e16)) d.toPlainString else d.toString
  }
  def plist(v: Seq[Long]): Unit = { println(v.size); println(v.mkString(" ")) }
  def main(args: Array[String]): Unit = {
    val L = scala.io.Source.stdin.getLines().toVector ++ Vector("", "")
    @BODY@
  }
}
""",
}


def parse_bodies(text: str, where: str) -> dict[str, str]:
    """Task id -> body of a bodies file's ``text`` (``@@@ <task id>`` lines, each followed by its body);
    ``where`` names the file in errors."""
    out: dict[str, str] = {}
    task = None
    lines: list[str] = []
    for line in text.split("\n"):
        if line.startswith("@@@ "):
            if task is not None:
                out[task] = "\n".join(lines).rstrip("\n")
            task, lines = line[4:].strip(), []
            if task in out:
                raise ValueError(f"{where}: {task} appears twice")
        elif task is not None:
            lines.append(line)
    if task is not None:
        out[task] = "\n".join(lines).rstrip("\n")
    return out


@cache
def bodies(language: str) -> dict[str, str]:
    """Task id -> body of ``references/<language>.txt`` (a language of :data:`BODY_LANGUAGES`)."""
    text = files(__package__).joinpath("references", f"{language}.txt").read_text(encoding="utf-8")
    return parse_bodies(text, f"references/{language}.txt")


def _task_number(task_id: str) -> int:
    return int(task_id.rsplit("/", 1)[1])


@cache
def reference_tasks() -> tuple[str, ...]:
    """The task ids with a body in every language, in HumanEval's order."""
    common = set.intersection(*(set(bodies(lang)) for lang in BODY_LANGUAGES))
    return tuple(sorted(common, key=_task_number))


def reference_program(task_id: str, language: str) -> str:
    """Our reference program for ``task_id`` in ``language`` (one of the 12)."""
    lang = get_multi_language(language)
    if task_id not in reference_tasks():
        raise ValueError(
            f"task_id must be one of REFERENCE_TASKS ({len(reference_tasks())} HumanEval ids such as "
            f"'HumanEval/0'), got {task_id!r}"
        )
    body = bodies("javascript" if lang == "typescript" else lang)[task_id]
    return FRAMES[lang].replace("@BODY@", body)
