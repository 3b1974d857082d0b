//! What the results file records about the machine: the driver's version and the clocks,
//! read through NVML (loaded at run time: a machine without it still runs the bench, and the
//! header says the clocks are unknown), plus the commit and the command line.

use crate::lab::Lab;
pub use catalog::records::Clocks;
use cust::device::DeviceAttribute;
use nvml_wrapper::Nvml;
use nvml_wrapper::enum_wrappers::device::{Clock, TemperatureSensor};

/// NVML, if this machine has it, and the PCI address of the lab's GPU.
pub struct Monitor {
    nvml: Result<Nvml, String>,
    pci: String,
}

impl Monitor {
    pub fn new(lab: &Lab) -> Monitor {
        let d = lab.device();
        let attr = |a| d.get_attribute(a).unwrap_or(0);
        // NVML's "domain:bus:device.function", hex: the same GPU as CUDA's device 0, whatever
        // CUDA_VISIBLE_DEVICES says.
        let pci = format!(
            "{:x}:{:x}:{:x}.0",
            attr(DeviceAttribute::PciDomainId),
            attr(DeviceAttribute::PciBusId),
            attr(DeviceAttribute::PciDeviceId)
        );
        let nvml = Nvml::init().map_err(|e| format!("NVML unavailable: {e}"));
        Monitor { nvml, pci }
    }

    /// The kernel driver's version (`580.159.04`): NVML, else /proc/driver/nvidia/version.
    pub fn driver_version(&self) -> Option<String> {
        if let Ok(Ok(v)) = self.nvml.as_ref().map(|n| n.sys_driver_version()) {
            return Some(v);
        }
        let text = std::fs::read_to_string("/proc/driver/nvidia/version").ok()?;
        proc_driver_version(&text)
    }

    pub fn clocks(&self) -> Clocks {
        let nvml = match &self.nvml {
            Ok(n) => n,
            Err(e) => {
                return Clocks {
                    source: e.clone(),
                    ..Clocks::default()
                };
            }
        };
        let d = match nvml.device_by_pci_bus_id(self.pci.as_str()) {
            Ok(d) => d,
            Err(e) => {
                return Clocks {
                    source: format!("NVML has no GPU at PCI {}: {e}", self.pci),
                    ..Clocks::default()
                };
            }
        };
        Clocks {
            source: "nvml".into(),
            sm_mhz: d.clock_info(Clock::SM).ok(),
            sm_max_mhz: d.max_clock_info(Clock::SM).ok(),
            memory_mhz: d.clock_info(Clock::Memory).ok(),
            temperature_c: d.temperature(TemperatureSensor::Gpu).ok(),
            power_w: d.power_usage().ok().map(|mw| mw as f64 / 1e3),
            throttle: d
                .current_throttle_reasons()
                .map(|r| r.iter_names().map(|(n, _)| n.to_string()).collect())
                .unwrap_or_default(),
        }
    }
}

/// `580.159.04` from `NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  Thu ...`.
pub fn proc_driver_version(text: &str) -> Option<String> {
    let line = text.lines().find(|l| l.starts_with("NVRM version"))?;
    line.split_whitespace()
        .find(|w| w.contains('.') && w.chars().all(|c| c.is_ascii_digit() || c == '.'))
        .map(str::to_string)
}

/// The commit this binary was built from (set by build.rs).
pub fn commit() -> String {
    env!("LAB_GIT_COMMIT").to_string()
}

/// This process's command line, quoted where a shell would need it, so a results file says
/// how to reproduce it.
pub fn command_line() -> String {
    std::env::args()
        .map(|a| {
            if !a.is_empty()
                && a.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./=,^:+@%".contains(c))
            {
                a
            } else {
                format!("'{}'", a.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_driver_version_from_proc() {
        let text = "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  Thu Oct  9 2025\n\
                    GCC version:  gcc version 13.3.0 (Ubuntu 13.3.0-6ubuntu2~24.04)\n";
        assert_eq!(proc_driver_version(text).as_deref(), Some("580.159.04"));
        assert_eq!(proc_driver_version("nothing here"), None);
    }
}
