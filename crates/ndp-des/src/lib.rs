//! A small discrete-event kernel in the spirit of SimPy, and nothing else: a virtual clock
//! and an event queue ([`Scheduler`]), models that handle events ([`Model`], [`run`]), and
//! resources ([`Resource`], [`Store`]) that keep the time-weighted statistics a power or
//! utilisation model needs. Hardware components are built on it in `ndp-sim`, not into it.
//!
//! Python generators become explicit state machines here: a model receives each event in
//! time order and schedules what follows. Ties in time are broken by scheduling order, so a
//! run is deterministic.
//!
//! Time is f64 seconds, and the queue key is (time, sequence), not the (time, priority,
//! sequence) over integer 1 ps ticks that the shared STYLE.md asks for; [`scheduler`] says
//! why and what still guarantees the order of ties.

pub mod resource;
pub mod rng;
pub mod scheduler;

pub use resource::{Resource, Store, TimeWeighted};
pub use rng::SplitMix64;
pub use scheduler::{run, Model, RunStats, Scheduler};
