//! Reads requests, one a line, as tests/rust/dtypes_test.go writes them,
//! and answers each on one line with the crate's dtype names:
//! `show <code> <bits> <lanes>` gives `DLDataType`'s `Display`;
//! `parse <name>` gives `ok <code> <bits> <lanes>` or `err <message>`.

use std::io::{self, BufRead, Write};

use dlpack::DLDataType;

fn main() {
    let mut out = io::BufWriter::new(io::stdout().lock());
    for line in io::stdin().lock().lines() {
        let line = line.expect("a line");
        let answer = match line.split_once(' ') {
            Some(("show", dtype)) => {
                let f: Vec<&str> = dtype.split(' ').collect();
                let dtype = DLDataType {
                    code: f[0].parse().expect("a code"),
                    bits: f[1].parse().expect("bits"),
                    lanes: f[2].parse().expect("lanes"),
                    ..DLDataType::ZERO
                };
                dtype.to_string()
            }
            Some(("parse", name)) => match DLDataType::parse(name) {
                Ok(d) => format!("ok {} {} {}", d.code, d.bits, d.lanes),
                Err(e) => format!("err {e}"),
            },
            _ => panic!("a request: {line:?}"),
        };
        writeln!(out, "{answer}").expect("stdout");
    }
}
