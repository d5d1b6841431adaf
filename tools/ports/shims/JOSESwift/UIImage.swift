// UIKit's `UIImage.checkmark`, which two of JOSESwift's header tests set as a parameter to see it refused (an
// object that is not JSON): on iOS XCTest brings UIKit in; Linux has no UIKit (it is not Security). A plain
// object stands in. Test-harness shim only.
import Foundation

open class UIImage: NSObject {
    public static var checkmark: UIImage { UIImage() }
}
