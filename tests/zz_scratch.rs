mod support;
use serde_json::json;
use std::sync::Arc;
use support::FakeApiServer;
use support::kubevirt_sim::{self, DrainFixture, KubeVirtSim, Script};
use vmctl::cluster::Kind;
#[test]
#[ignore]
fn scratch_lab() {
    let server = Arc::new(FakeApiServer::start_blocking(
        kubevirt_sim::drain_cluster_with(&DrainFixture {
            blocker: true,
            ..DrainFixture::default()
        }),
    ));
    let sim = KubeVirtSim::start(
        &server,
        Script {
            running_ticks: 8,
            evacuation_failures: 1,
            evacuation_backoff_ticks: 3,
            ..Script::default()
        },
    );
    let kc = server.write_kubeconfig(std::path::Path::new("/tmp/scratch"));
    println!("KUBECONFIG {}", kc.display());
    server.patch_object(
        Kind::Node,
        None,
        "node-1",
        json!({"spec": {"unschedulable": true}}),
    );
    server.patch_object(
        Kind::VirtualMachineInstance,
        Some("prod"),
        "web-01",
        json!({"status": {"evacuationNodeName": "node-1"}}),
    );
    std::thread::sleep(std::time::Duration::from_secs(12));
    sim.set_script(Script {
        hold_running: true,
        ..Script::default()
    });
    server.patch_object(
        Kind::VirtualMachineInstance,
        Some("prod"),
        "batch-01",
        json!({"status": {"evacuationNodeName": "node-1"}}),
    );
    std::fs::write("/tmp/scratch/ready", "1").unwrap();
    std::thread::sleep(std::time::Duration::from_secs(400));
}
