//! Choosing the backend once, at the entry point.

use crate::ModelError;
use burn::tensor::Device;
use std::fmt;
use std::str::FromStr;

/// Which burn backend runs the network.  The CLI picks one; everything else
/// receives it as a value.  GPU backends exist only when the crate is built
/// with the `wgpu` or `cuda` feature.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DeviceChoice {
    /// burn's `flex` pure-Rust CPU backend (the default; measured fastest on CPU).
    #[default]
    Flex,
    /// wgpu (Vulkan/Metal/DX12), with the `wgpu` feature.
    Wgpu,
    /// CUDA device 0, with the `cuda` feature.
    Cuda,
}

impl DeviceChoice {
    /// Every choice, compiled in or not.
    pub const ALL: [DeviceChoice; 3] = [DeviceChoice::Flex, DeviceChoice::Wgpu, DeviceChoice::Cuda];

    /// Name used on the command line.
    pub fn name(self) -> &'static str {
        match self {
            DeviceChoice::Flex => "flex",
            DeviceChoice::Wgpu => "wgpu",
            DeviceChoice::Cuda => "cuda",
        }
    }

    /// Whether this build has the backend (`flex` always; GPUs by feature).
    pub fn compiled_in(self) -> bool {
        match self {
            DeviceChoice::Flex => true,
            DeviceChoice::Wgpu => cfg!(feature = "wgpu"),
            DeviceChoice::Cuda => cfg!(feature = "cuda"),
        }
    }

    /// The burn device, or an error when the backend is not compiled in.
    pub(crate) fn device(self) -> Result<Device, ModelError> {
        match self {
            DeviceChoice::Flex => Ok(Device::flex()),
            #[cfg(feature = "wgpu")]
            DeviceChoice::Wgpu => Ok(Device::wgpu(Default::default())),
            #[cfg(feature = "cuda")]
            DeviceChoice::Cuda => Ok(Device::cuda(0)),
            #[allow(unreachable_patterns)]
            other => Err(ModelError::Backend(format!(
                "backend {} is not compiled in (build tammi with --features {})",
                other.name(),
                other.name()
            ))),
        }
    }
}

impl fmt::Display for DeviceChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A backend reads and writes as its name (`"flex"`), as in specs and configs.
impl serde::Serialize for DeviceChoice {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

impl<'de> serde::Deserialize<'de> for DeviceChoice {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<DeviceChoice, D::Error> {
        let name = String::deserialize(deserializer)?;
        name.parse().map_err(serde::de::Error::custom)
    }
}

impl FromStr for DeviceChoice {
    type Err = ModelError;
    fn from_str(s: &str) -> Result<DeviceChoice, ModelError> {
        DeviceChoice::ALL
            .into_iter()
            .find(|d| d.name() == s)
            .ok_or_else(|| {
                ModelError::Backend(format!(
                    "unknown backend {s:?} (expected flex, wgpu or cuda)"
                ))
            })
    }
}
