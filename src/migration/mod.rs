//! Driving migrations: one `JobSample` shape for both drivers (KubeVirt, libvirt), the
//! adaptive controller (pure), and the drivers themselves.
