//! Support shared by the integration tests (`mod support;`). Not every test file uses every
//! item, hence the module-wide allowances.
#![allow(dead_code, unused_imports)]

pub mod apiserver;
pub mod http;
pub mod kubevirt_sim;
pub mod recorder;
pub mod tmux;

pub use apiserver::{FakeApiServer, Fault, Hook, HookReply, HookRequest, Method, RecordedRequest};
