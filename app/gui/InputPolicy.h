#pragma once
// Application-wide input rules for the docks' editors (issue 10, "input focus"):
// - single-key shortcuts (Space, letters) work while a number field has focus (they are not
//   valid input there);
// - Esc discards what was typed and leaves the field for the viewport;
// - the scroll wheel edits only the focused spin box / combo box / slider; otherwise it scrolls
//   the dock the user is moving through.
#include <QObject>

class QWidget;

namespace octo::app {

class InputPolicy : public QObject {
public:
    /// `home` gets the focus on Esc (the viewport). Install with qApp->installEventFilter.
    InputPolicy(QWidget* home, QObject* parent);
    /// Gives editors under `root` strong focus (a wheel over them must not focus them).
    static void applyFocusPolicy(QWidget* root);

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    QWidget* home_;
};

} // namespace octo::app
