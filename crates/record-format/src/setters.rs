//! `with_setters!`: the `with_<field>` setters of an options struct that is `#[non_exhaustive]`
//! (so other crates build it from `Default` and these setters, never a struct literal).

/// Writes `pub fn with_<field>(self, value) -> Self` for each `field: Type => with_field` given.
macro_rules! with_setters {
    ($ty:ident$(<$lt:lifetime>)? { $($field:ident: $fty:ty => $setter:ident),* $(,)? }) => {
        impl$(<$lt>)? $ty$(<$lt>)? {
            $(
                #[doc = concat!("Sets [`", stringify!($field), "`](Self::", stringify!($field), ").")]
                #[must_use]
                pub fn $setter(mut self, $field: $fty) -> Self {
                    self.$field = $field;
                    self
                }
            )*
        }
    };
}

pub(crate) use with_setters;
