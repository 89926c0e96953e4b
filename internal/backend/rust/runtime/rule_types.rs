//! The types of the rule tables (the parent module, generated from the
//! schema) and how they are read: the same for every release, so that
//! what varies, the tables, is all the generated module holds.

use core::fmt;

use super::{Rule, DATA_TYPE_NAMES, MESSAGES};
use crate::{DLDataType, DLDataTypeCode};

/// When a pointer field may be NULL.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NullWhen {
    /// Never.
    Never,
    /// Always.
    Always,
    /// Only when the tensor has no dimensions.
    IfNdimZero,
    /// Only when the tensor has no elements.
    IfNoElements,
}

/// When a pointer field may be NULL, in a tensor of a given version: the
/// rule of a tensor's own version holds, not the consumer's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Nullable {
    /// The rule of tensors of this release.
    pub when: NullWhen,
    /// The rule of older tensors, where it was another.
    pub changed: Option<NullableChange>,
}

/// The nullable rule of tensors older than a release.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct NullableChange {
    /// The first release, (major, minor), whose tensors follow
    /// [`Nullable::when`].
    pub since: (u32, u32),
    /// The rule of tensors older than `since`.
    pub before: NullWhen,
}

impl Nullable {
    /// Whether the field may be NULL in a tensor of `version`, (major,
    /// minor) compared as a version, or `None` for a legacy
    /// DLManagedTensor, older than every versioned one; with `ndim`
    /// dimensions, and `empty` when it has no elements.
    pub const fn allows(self, version: Option<(u32, u32)>, ndim: usize, empty: bool) -> bool {
        let mut when = self.when;
        if let Some(c) = self.changed {
            let older = match version {
                None => true,
                Some((major, minor)) => {
                    major < c.since.0 || (major == c.since.0 && minor < c.since.1)
                }
            };
            if older {
                when = c.before;
            }
        }
        match when {
            NullWhen::Never => false,
            NullWhen::Always => true,
            NullWhen::IfNdimZero => ndim == 0,
            NullWhen::IfNoElements => empty,
        }
    }
}

/// The name of an element type of one lane.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DataTypeName {
    /// The name: `float32`, `bfloat16`, `float8_e4m3fn`, `bool`.
    pub name: &'static str,
    /// Its type code.
    pub code: DLDataTypeCode,
    /// Its width.
    pub bits: u8,
}

/// The message of a rule, as the schema states it.
pub(super) struct Message {
    pub(super) id: &'static str,
    pub(super) python: &'static str,
    pub(super) text: &'static str,
    pub(super) params: &'static [&'static str],
}

impl Rule {
    const fn message(self) -> &'static Message {
        &MESSAGES[self as usize]
    }

    /// The rule's id, as messages and the conformance corpus name it:
    /// `ndim_range`.
    pub const fn id(self) -> &'static str {
        self.message().id
    }

    /// The rule called `id`, if there is one.
    pub fn from_id(id: &str) -> Option<Rule> {
        Rule::ALL.into_iter().find(|r| r.id() == id)
    }

    /// The exception a Python module raises when the rule is broken:
    /// `BufferError`, `ValueError` or `TypeError`.
    pub const fn python(self) -> &'static str {
        self.message().python
    }

    /// The message, with a `{param}` placeholder for each parameter it
    /// names.
    pub const fn text(self) -> &'static str {
        self.message().text
    }

    /// The parameters of the message, in the order [`Rule::format`] takes
    /// them.
    pub const fn params(self) -> &'static [&'static str] {
        self.message().params
    }

    /// The message, with one argument per parameter in the order of
    /// [`Rule::params`]; it shows integers in decimal and strings as they
    /// are, as every language does.
    pub fn format<'a>(self, args: &'a [&'a dyn fmt::Display]) -> Formatted<'a> {
        debug_assert_eq!(
            args.len(),
            self.params().len(),
            "{self}: one argument per parameter"
        );
        Formatted { rule: self, args }
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}

/// A rule's message and its arguments, rendered by `Display`.
#[derive(Clone, Copy)]
pub struct Formatted<'a> {
    rule: Rule,
    args: &'a [&'a dyn fmt::Display],
}

impl fmt::Display for Formatted<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The schema's loader guarantees that every brace opens a
        // placeholder naming a parameter, and that it is closed.
        let params = self.rule.params();
        let mut rest = self.rule.text();
        while let Some(open) = rest.find('{') {
            f.write_str(&rest[..open])?;
            rest = &rest[open + 1..];
            let close = rest.find('}').unwrap_or(rest.len());
            let name = &rest[..close];
            match params
                .iter()
                .position(|p| *p == name)
                .and_then(|i| self.args.get(i))
            {
                Some(arg) => arg.fmt(f)?,
                None => write!(f, "{{{name}}}")?,
            }
            rest = rest.get(close + 1..).unwrap_or("");
        }
        f.write_str(rest)
    }
}

impl fmt::Debug for Formatted<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Formatted")
            .field("rule", &self.rule)
            .finish_non_exhaustive()
    }
}

/// Shows a dtype as every language does: its name, followed by `x` and the
/// lane count when it has several lanes (`float32x4`), and
/// `DataType(code=C, bits=B, lanes=L)` for a dtype without a name.
impl fmt::Display for DLDataType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let code = DLDataTypeCode(self.code);
        let named = DATA_TYPE_NAMES
            .iter()
            .find(|n| n.code == code && n.bits == self.bits && self.lanes != 0);
        match named {
            Some(n) if self.lanes == 1 => f.write_str(n.name),
            Some(n) => write!(f, "{}x{}", n.name, self.lanes),
            None => write!(
                f,
                "DataType(code={}, bits={}, lanes={})",
                self.code, self.bits, self.lanes
            ),
        }
    }
}

/// Shows a dtype as `Display` does (`float32`), as Python's `repr` shows
/// it, so that a `DLTensor`'s or an error's `Debug` names its element type.
///
/// ```
/// use dlpack::{DLDataType, DLDataTypeCode, DLDevice, DLDeviceType};
///
/// let float32x4 = DLDataType { code: DLDataTypeCode::kDLFloat.0, bits: 32, lanes: 4, ..DLDataType::ZERO };
/// assert_eq!(format!("{float32x4:?}"), "float32x4");
/// let odd = DLDataType { code: 99, bits: 8, lanes: 1, ..DLDataType::ZERO };
/// assert_eq!(format!("{odd:?}"), "DataType(code=99, bits=8, lanes=1)");
/// let cpu = DLDevice { device_type: DLDeviceType::kDLCPU, ..DLDevice::ZERO };
/// assert!(format!("{cpu:?}").starts_with("DLDevice { device_type: kDLCPU, device_id: 0"));
/// ```
impl fmt::Debug for DLDataType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl DLDataType {
    /// The dtype a name stands for, as `Display` shows it: one of
    /// [`DATA_TYPE_NAMES`], optionally followed by
    /// `x` and a lane count (`float32x4`).
    pub fn parse(name: &str) -> Result<DLDataType, UnknownDataTypeName<'_>> {
        for n in DATA_TYPE_NAMES {
            let lanes = if name == n.name {
                1
            } else {
                let count = name.strip_prefix(n.name).and_then(|c| c.strip_prefix('x'));
                let Some(count) = count.filter(|c| {
                    !c.is_empty() && !c.starts_with('0') && c.bytes().all(|b| b.is_ascii_digit())
                }) else {
                    continue;
                };
                let Ok(lanes) = count.parse::<u16>() else {
                    continue;
                };
                lanes
            };
            return Ok(DLDataType {
                code: n.code.0,
                bits: n.bits,
                lanes,
                ..DLDataType::ZERO
            });
        }
        Err(UnknownDataTypeName(name))
    }
}

/// A name [`DLDataType::parse`] does not know; `Display` gives the message
/// of [`Rule::DtypeName`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UnknownDataTypeName<'a>(pub &'a str);

impl fmt::Display for UnknownDataTypeName<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        Rule::DtypeName.format(&[&self.0, &KnownNames]).fmt(f)
    }
}

impl core::error::Error for UnknownDataTypeName<'_> {}

/// The dtype names, joined by ", ".
struct KnownNames;

impl fmt::Display for KnownNames {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, n) in DATA_TYPE_NAMES.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            f.write_str(n.name)?;
        }
        Ok(())
    }
}
