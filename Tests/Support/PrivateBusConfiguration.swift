/// The configuration of a `dbus-daemon` a test starts for itself: a session bus on the Unix socket
/// `socketPath`, EXTERNAL authentication, every name ownable and every message allowed, and no service
/// directory — so nothing is activated behind the test's back (GNOME Keyring, say). `extraPolicy` goes before
/// the default policy (a test's own rules).
public enum PrivateBusConfiguration {
    /// The configuration file's text.
    public static func text(socketPath: String, extraPolicy: String = "") -> String {
        """
        <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
        <busconfig>
          <type>session</type>
          <listen>unix:path=\(socketPath)</listen>
          <auth>EXTERNAL</auth>
          \(extraPolicy)
          <policy context="default">
            <allow send_destination="*" eavesdrop="true"/>
            <allow eavesdrop="true"/>
            <allow own="*"/>
          </policy>
        </busconfig>
        """
    }
}
