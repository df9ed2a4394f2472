//! Conversions from typed argument fields to resolver parameters.
//!
//! A resolver that takes a tool argument (`"arg"` in the spec) receives the plain Rust type of
//! its JSON type (`&str`, `i64`, `f64`, `bool`), whatever constraints each consuming tool puts
//! on it. typify represents a constrained integer with the narrowest fitting type (`u8`,
//! `NonZeroU64`, ...); [`int_arg`] widens any of them back to `i64`. The value was validated
//! against the tool's schema before, so it fits.

use std::num::{
    NonZeroI8, NonZeroI16, NonZeroI32, NonZeroI64, NonZeroU8, NonZeroU16, NonZeroU32, NonZeroU64,
};

/// An integer argument type typify may generate.
pub trait IntArg: Copy {
    /// The value as `i64` (saturating, though validated values always fit).
    fn to_i64(self) -> i64;
}

macro_rules! int_arg {
    ($($t:ty => |$v:ident| $e:expr),* $(,)?) => {
        $(impl IntArg for $t {
            fn to_i64(self) -> i64 {
                let $v = self;
                $e
            }
        })*
    };
}

int_arg! {
    i8 => |v| i64::from(v), i16 => |v| i64::from(v), i32 => |v| i64::from(v), i64 => |v| v,
    u8 => |v| i64::from(v), u16 => |v| i64::from(v), u32 => |v| i64::from(v),
    u64 => |v| i64::try_from(v).unwrap_or(i64::MAX),
    NonZeroI8 => |v| i64::from(v.get()), NonZeroI16 => |v| i64::from(v.get()),
    NonZeroI32 => |v| i64::from(v.get()), NonZeroI64 => |v| v.get(),
    NonZeroU8 => |v| i64::from(v.get()), NonZeroU16 => |v| i64::from(v.get()),
    NonZeroU32 => |v| i64::from(v.get()),
    NonZeroU64 => |v| i64::try_from(v.get()).unwrap_or(i64::MAX),
}

/// An integer argument as the `i64` a resolver takes.
pub fn int_arg(value: impl IntArg) -> i64 {
    value.to_i64()
}
