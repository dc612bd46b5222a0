//! [`Extensions`]: a map of values keyed by their type, the way `http::Extensions` carries
//! request-scoped data through tower and axum. One execution carries one (what its
//! definition's prepare hook computed); the runtime keeps one for the shared state of tool
//! bodies ([`ToolRuntime::insert_state`](crate::ToolRuntime::insert_state)).

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::fmt;

/// Values keyed by their type: at most one value of each type.
///
/// ```
/// use tools_runtime::Extensions;
///
/// #[derive(Debug, PartialEq)]
/// struct Budget(u32);
///
/// let mut ext = Extensions::new();
/// assert!(ext.insert(Budget(3)).is_none());
/// assert_eq!(ext.get::<Budget>(), Some(&Budget(3)));
/// assert_eq!(ext.insert(Budget(5)), Some(Budget(3)));
/// assert_eq!(ext.remove::<Budget>(), Some(Budget(5)));
/// assert!(ext.is_empty());
/// ```
#[derive(Default)]
pub struct Extensions {
    map: HashMap<TypeId, Box<dyn Any + Send + Sync>>,
}

impl Extensions {
    /// An empty map.
    pub fn new() -> Self {
        Self::default()
    }

    /// Stores `value`, returning the value of the same type it replaces.
    pub fn insert<T: Send + Sync + 'static>(&mut self, value: T) -> Option<T> {
        self.map
            .insert(TypeId::of::<T>(), Box::new(value))
            .and_then(|old| old.downcast::<T>().ok().map(|b| *b))
    }

    /// The value of type `T`, if there is one.
    pub fn get<T: Send + Sync + 'static>(&self) -> Option<&T> {
        self.map
            .get(&TypeId::of::<T>())
            .and_then(|v| v.downcast_ref::<T>())
    }

    /// The value of type `T`, mutably.
    pub fn get_mut<T: Send + Sync + 'static>(&mut self) -> Option<&mut T> {
        self.map
            .get_mut(&TypeId::of::<T>())
            .and_then(|v| v.downcast_mut::<T>())
    }

    /// Takes the value of type `T` out of the map.
    pub fn remove<T: Send + Sync + 'static>(&mut self) -> Option<T> {
        self.map
            .remove(&TypeId::of::<T>())
            .and_then(|v| v.downcast::<T>().ok().map(|b| *b))
    }

    /// Whether the map holds no value.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// How many values the map holds.
    pub fn len(&self) -> usize {
        self.map.len()
    }
}

impl fmt::Debug for Extensions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Extensions")
            .field("len", &self.map.len())
            .finish_non_exhaustive()
    }
}
